// eslint over js/ (`npm run lint`): the recommended rules, plus limits that keep each function and
// module to one job (as tests/test_layout.py does for the Python side).
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["dist/", "node_modules/"] },
  js.configs.recommended,
  {
    languageOptions: { ecmaVersion: "latest", sourceType: "module", globals: globals.browser },
    rules: {
      complexity: ["error", 15],
      "max-lines": ["error", { max: 400 }],
      "max-depth": ["error", 4],
      "no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  { files: ["tests/**/*.js", "eslint.config.js"], languageOptions: { globals: globals.node } },
];
