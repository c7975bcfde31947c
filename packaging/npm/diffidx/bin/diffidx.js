#!/usr/bin/env node
// Runs the git-diffidx binary of this platform's package: the optional
// dependency npm installed for this os and cpu (as esbuild and biome ship
// theirs). Arguments, streams and the exit status pass through unchanged.
"use strict";

const { spawnSync } = require("node:child_process");

const key = `${process.platform}-${process.arch}`;
const pkg = `@diffidx/cli-${key}`;
const exe = `git-diffidx${process.platform === "win32" ? ".exe" : ""}`;

let binary;
try {
  binary = require.resolve(`${pkg}/bin/${exe}`);
} catch {
  console.error(
    `diffidx: no prebuilt binary for ${key}: the package ${pkg} is not installed. ` +
      "Install with optional dependencies (npm's default), or build from source: " +
      "https://github.com/diffidx/diffidx#install",
  );
  process.exit(2);
}

const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`diffidx: cannot run ${binary}: ${run.error.message}`);
  process.exit(2);
}
if (run.signal) {
  process.kill(process.pid, run.signal);
}
process.exit(run.status === null ? 1 : run.status);
