// ESLint for every code folder: typescript-eslint's strict, type-checked rules, plus the
// house rules a linter can hold (no function with more than four positional parameters; see
// CONTRIBUTING.md). Formatting is Prettier's (`npm run format:check`); `npm run lint` runs both.
import js from '@eslint/js'
import globals from 'globals'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/**', 'docs-api/**', '.scratch/**', 'node_modules/**', 'test/fixtures/**'] },
  {
    files: ['{src,adapters,oauth,testing,cli,redis,otel,gate,bench,bin,demo}/**/*.ts'],
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
      // `() => server.close(done)` says what it means; a block around it says nothing more.
      // A leading underscore marks a binding kept for its place (a rest sibling, a parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true }],
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
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
  {
    // The repository's own scripts are plain ES modules run by Node.
    files: ['scripts/**/*.mjs', 'eslint.config.js', 'typedoc.config.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
)
