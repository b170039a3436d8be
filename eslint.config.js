// eslint for the Cockpit page (cockpit/*.js) and its node tests
// (tests/browser/*.js): scripts/check-lint.sh runs it, from the versions
// pinned in scripts/lint/package-lock.json, which scripts/install-deps.sh
// --test installs into /var/cache/trimd-lint (NODE_PATH finds them there:
// hence CommonJS and require()).
"use strict";

const js = require("@eslint/js");
const globals = require("globals");

// Beyond eslint's recommended rules: what the page's code already keeps to.
const house = {
    eqeqeq: "error",
    "no-var": "error",
    "prefer-const": "error",
    "no-shadow": "error",
    "no-implicit-globals": "error",
    strict: ["error", "global"],
};

module.exports = [
    js.configs.recommended,
    {
        // The page's scripts: plain <script>s in Cockpit's frame, cockpit.js
        // loaded before them; each keeps to its own function scope.
        files: ["cockpit/**/*.js"],
        languageOptions: {
            ecmaVersion: 2022,
            sourceType: "script",
            globals: { ...globals.browser, cockpit: "readonly" },
        },
        rules: house,
    },
    {
        files: ["tests/browser/**/*.js", "eslint.config.js"],
        languageOptions: { ecmaVersion: 2022, sourceType: "commonjs", globals: globals.node },
        rules: house,
    },
];
