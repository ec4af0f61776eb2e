/** What the report says about the machine a run happened on. */
import { execFileSync } from "node:child_process";
import os from "node:os";
import { openFilesLimit } from "../scenarios/scale.mjs";

function gitCommit() {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

export function machineInfo() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model?.trim() ?? "unknown",
    cores: cpus.length,
    memoryGb: os.totalmem() / 1024 ** 3,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAvg: os.loadavg(),
    openFiles: openFilesLimit(),
    commit: gitCommit(),
    date: new Date().toISOString(),
  };
}
