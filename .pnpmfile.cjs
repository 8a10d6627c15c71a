/* global module */
// pnpm hooks (https://pnpm.io/pnpmfile).
//
// @openhands/agent-canvas (the OpenHands web UI, a dev dependency of packages/compat) is used only
// for its prebuilt `build/` folder and its `scripts/static-server.mjs` (+ `scripts/proxy-utils.mjs`),
// which import nothing but `sirv` and `httpxy`. Its other dependencies (monaco, heroui, vite,
// electron tooling…) and its React peers are for building or embedding the UI, which we never do:
// drop them so the install stays small.
const AGENT_CANVAS_RUNTIME = ["sirv", "httpxy"];

function readPackage(pkg) {
  if (pkg.name === "@openhands/agent-canvas") {
    const dependencies = pkg.dependencies ?? {};
    pkg.dependencies = Object.fromEntries(AGENT_CANVAS_RUNTIME.filter((name) => dependencies[name]).map((name) => [name, dependencies[name]]));
    pkg.peerDependencies = {};
    pkg.peerDependenciesMeta = {};
    pkg.optionalDependencies = {};
  }
  return pkg;
}

module.exports = { hooks: { readPackage } };
