import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules', '.rotscope', 'dist', '.scratch', 'coverage', 'src/ui/dist'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
);
