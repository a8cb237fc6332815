// Lint configuration: type-aware typescript-eslint rules (floating promises, unsafe any) on every TS file.
import { builtinModules } from "node:module";
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

/** Node built-ins and the I/O libraries: the domain core imports none of them (time, network and files are injected). */
const IO_MODULES = [
  ...builtinModules,
  "node:*",
  "undici",
  "ws",
  "pino",
  "pino-*",
  "prom-client",
  "convict",
  "rxjs",
  "rxjs/*",
];

/** Only the composition root (app.ts) and the CLI (main.ts, cli/main-usage.ts) start or describe the simulator. */
const NO_SIMULATOR = {
  regex: "(^|/)simulator/",
  message: "Only the composition root (app.ts) and the CLI (main.ts, cli/main-usage.ts) use the simulator.",
};
// Any depth of `../`, so files in sub-folders (src/config/rules/) are held to the same layer.
const ABOVE_STATE = "^(\\.\\./)+(pipeline|sinks|http|simulator)/|^(\\.\\./)+app\\.js$";

/**
 * Layers (an outer layer may import an inner one, never the reverse): domain ← state, upstream, config ←
 * pipeline, sinks, http ← app. One entry per file set: ESLint keeps only the last setting of a rule.
 */
const LAYERS = [
  {
    files: ["src/domain/*.ts"],
    patterns: [
      { group: IO_MODULES, message: "src/domain is pure: inject time, network and files instead." },
      { regex: "^\\.\\./", message: "src/domain imports nothing outside itself." },
      NO_SIMULATOR,
    ],
  },
  {
    files: ["src/domain/*/*.ts"],
    patterns: [
      { group: IO_MODULES, message: "src/domain is pure: inject time, network and files instead." },
      { regex: "^\\.\\./\\.\\./", message: "src/domain imports nothing outside itself." },
      NO_SIMULATOR,
    ],
  },
  {
    files: ["src/state/**/*.ts"],
    patterns: [
      { regex: ABOVE_STATE, message: "src/state sits below the pipeline, the sinks and the server." },
    ],
  },
  {
    files: ["src/upstream/**/*.ts", "src/config/**/*.ts"],
    patterns: [
      {
        regex: ABOVE_STATE,
        message: "upstream and config sit below the pipeline, the sinks and the server.",
      },
    ],
  },
  {
    files: ["src/**/*.ts"],
    ignores: [
      "src/domain/**",
      "src/state/**",
      "src/upstream/**",
      "src/config/**",
      "src/simulator/**",
      "src/app.ts",
      "src/main.ts",
      "src/cli/main-usage.ts",
    ],
    patterns: [NO_SIMULATOR],
  },
];

/**
 * The status page (web/src, compiled for the browser by web/tsconfig.json) ships alone: it imports nothing from
 * src/ (wire types are its own; test/web/contract.test.ts checks them against the daemon's), no Node built-in and
 * no package (no bundler resolves one: only its own modules, by relative path).
 */
const WEB_IMPORTS = [
  { group: [...builtinModules, "node:*"], message: "web/src runs in a browser: no Node built-ins." },
  {
    regex: "^(\\.\\./)+(src|test|bench)/",
    message: "web/src imports nothing from the daemon: declare the type in web/src/types.ts.",
  },
  {
    regex: "^[^.]",
    message: "web/src is served as is, with no bundler: import its own modules by relative path only.",
  },
];

/** The domain core keeps no state of its own: no module-level `let`, Map, Set or WeakMap (caches belong to an owner). */
const NO_MODULE_STATE = [
  ...["Program > VariableDeclaration", "Program > ExportNamedDeclaration > VariableDeclaration"].flatMap(
    (decl) => [
      {
        selector: `${decl}[kind='let']`,
        message: "No module-level let in src/domain: state belongs to the value that owns it.",
      },
      {
        selector: `${decl} > VariableDeclarator:not([id.typeAnnotation.typeAnnotation.typeName.name=/^Readonly(Set|Map)$/]) > NewExpression[callee.name=/^(Map|Set|WeakMap|WeakSet)$/]`,
        message:
          "No module-level Map/Set/WeakMap in src/domain: a cache belongs to the evaluator or state that owns it.",
      },
    ],
  ),
];

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
    files: ["src/domain/**/*.ts"],
    rules: { "no-restricted-syntax": ["error", ...OWN_DATA, ONE_BINDING_PER_KEY, ...NO_MODULE_STATE] },
  },
  {
    // every function in src/ stays under 80 lines: a longer one is split into named steps
    files: ["src/**/*.ts"],
    rules: { "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // the status page: browser code, held to the daemon's function size and to its own import rule
    files: ["web/**/*.ts"],
    rules: {
      "max-lines-per-function": ["error", { max: 80, skipBlankLines: true, skipComments: true }],
      "no-restricted-imports": ["error", { patterns: WEB_IMPORTS }],
    },
  },
  ...LAYERS.map(({ files, ignores, patterns }) => ({
    files,
    ...(ignores === undefined ? {} : { ignores }),
    rules: { "no-restricted-imports": ["error", { patterns }] },
  })),
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/unbound-method": "off",
    },
  },
);
