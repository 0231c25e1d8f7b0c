// ESLint for the library's own code: typescript-eslint's strict, type-checked rules, plus
// the house rules of DESIGN.md section 5 that a linter can hold (no function with more than
// four positional parameters). Formatting is Prettier's (`npm run format:check`).
import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'docs-api/**', '.scratch/**', 'node_modules/**', 'test/fixtures/**'] },
  {
    files: ['src/**/*.ts', 'adapters/**/*.ts', 'redis/**/*.ts', 'otel/**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.strictTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      'max-params': ['error', 4],
      // Template literals with numbers are how error messages name limits.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      // Options and arguments come from JavaScript callers too: checking at run time what
      // the types already say is the point of those checks, not dead code.
      '@typescript-eslint/no-unnecessary-condition': 'off',
      // Errors of unknown type are passed on as they are (rejected, rethrown), never wrapped:
      // wrapping would hide an upstream failure's class from the HTTP contract.
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      // Control characters are exactly what the token, realm and group id checks refuse.
      'no-control-regex': 'off',
    },
  },
  {
    // Nest's own APIs (Reflector, decorators) are typed with `Function` and unbound methods.
    files: ['adapters/nestjs/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
)
