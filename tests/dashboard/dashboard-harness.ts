import { execFile } from "node:child_process";
import { MCPD_BIN, type TestDaemon } from "../e2e/harness.js";
import { httpFront, type HttpFrontInfo } from "../http/http-harness.js";

/** The environment the test daemon runs in, for the `mcpd` command to find it. */
export function commandEnv(d: TestDaemon): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, MCPD_HOME: d.home, MCPD_CONFIG: d.configFile, XDG_RUNTIME_DIR: "", BROWSER: "" };
  delete env.MCPD_SOCKET;
  return env;
}

/** Runs `mcpd dashboard --print-url` against the test daemon: the one-time login link it prints. */
export async function loginLink(d: TestDaemon): Promise<string> {
  await httpFront(d);
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [MCPD_BIN, "dashboard", "--print-url"], { env: commandEnv(d) }, (err, stdout, stderr) => {
      if (err) reject(new Error(`mcpd dashboard failed: ${stderr}`, { cause: err }));
      else resolve(stdout.trim());
    });
  });
}

/** Logs in over HTTP: the session cookie (`name=value`) the link sets, and the page's CSRF token. */
export async function logIn(d: TestDaemon, front: HttpFrontInfo): Promise<{ cookie: string; csrf: string }> {
  const link = await loginLink(d);
  const res = await fetch(link, { redirect: "manual" });
  if (res.status !== 303) throw new Error(`login answered ${res.status}`);
  const cookie = (res.headers.get("set-cookie") ?? "").split(";")[0] as string;
  const page = await (await fetch(`${front.origin}/`, { headers: { cookie } })).text();
  const csrf = /name="mcpd-csrf" content="([^"]+)"/.exec(page)?.[1];
  if (csrf === undefined) throw new Error(`no CSRF token in the page: ${page}`);
  return { cookie, csrf };
}
