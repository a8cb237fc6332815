// Lint configuration: type-aware typescript-eslint rules (floating promises, unsafe any) on every TS file.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

/** Tests own their data: nothing reads the shared spec folder or a machine's absolute paths. */
const OWN_DATA = [
  {
    selector: "Literal[value=/\\.\\.\\/shared\\/|^\\/(work|home|root)\\//]",
    message: "Read files from inside the repository (test/fixtures/), never ../shared or an absolute path.",
  },
  {
    selector: "TemplateElement[value.raw=/\\.\\.\\/shared\\/|^\\/(work|home|root)\\//]",
    message: "Read files from inside the repository (test/fixtures/), never ../shared or an absolute path.",
  },
];

/** One binding per key in every log line: child loggers are made only by src/logger.ts, which refuses a re-bound key. */
const ONE_BINDING_PER_KEY = {
  selector:
    "CallExpression[callee.property.name='child'][arguments.length=1][arguments.0.type='ObjectExpression']",
  message:
    "Use childLogger()/componentLogger() from src/logger.ts: pino writes a key the parent already binds twice.",
};

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "var/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.js", "bin/*.js"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": "error",
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      eqeqeq: ["error", "always", { null: "ignore" }],
      // Tests own their data: nothing reads the shared spec folder or a machine's absolute paths.
      "no-restricted-syntax": ["error", ...OWN_DATA],
    },
  },
  {
    files: ["src/**/*.ts"],
    ignores: ["src/logger.ts"],
    rules: { "no-restricted-syntax": ["error", ...OWN_DATA, ONE_BINDING_PER_KEY] },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/unbound-method": "off",
    },
  },
);
