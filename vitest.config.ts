import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Servers in the tests listen on loopback; a generous timeout absorbs a slow CI machine
    // without hiding hangs (every upstream call in the library has its own deadline).
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
  },
})
