/**
 * The socket ownership rule, branch by branch, on real files in a private temporary directory. "Another
 * user" is simulated by asking for a uid that owns nothing here (the `uid` parameter), so these run as
 * any user; tests/reliability/security-squatting.test.ts runs the same rule against a real other user.
 */
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UntrustedSocketError } from "@mcpd/protocol";
import { assertTrustedSocket, checkSocketTrust } from "../src/socket-trust.js";

const me = process.getuid?.();
let dir: string;
let server: net.Server | undefined;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mcpdt-"));
});
afterEach(async () => {
  if (server) await new Promise<void>((r) => server!.close(() => r()));
  server = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

function listen(p: string): Promise<void> {
  server = net.createServer((s) => s.destroy());
  return new Promise((resolve, reject) => {
    server!.once("error", reject);
    server!.listen(p, () => resolve());
  });
}

describe.skipIf(me === undefined)("checkSocketTrust", () => {
  const other = (me as number) + 4242;

  it("trusts a private directory of ours with our socket in it, and paths with nothing to check yet", async () => {
    const sock = path.join(dir, "mcpd.sock");
    expect(checkSocketTrust(sock)).toBeUndefined(); // no socket yet
    expect(checkSocketTrust(path.join(dir, "missing", "mcpd.sock"))).toBeUndefined(); // no directory yet
    await listen(sock);
    expect(checkSocketTrust(sock)).toBeUndefined();
    expect(() => assertTrustedSocket(sock)).not.toThrow();
    fs.chmodSync(dir, 0o755); // readable by others is fine: only writing lets them swap the socket
    expect(checkSocketTrust(sock)).toBeUndefined();
  });

  it("regression: refuses a socket directory under a parent others may write without the sticky bit (they could swap the directory, socket and all, between the check and the connect), and trusts it under a sticky one", async () => {
    const shared = path.join(dir, "shared");
    const home = path.join(shared, "home");
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    fs.chmodSync(home, 0o700);
    const sock = path.join(home, "mcpd.sock");
    await listen(sock);
    fs.chmodSync(shared, 0o777);
    const p = checkSocketTrust(sock);
    expect(p?.path).toBe(fs.realpathSync(shared));
    expect(p?.message).toContain("writable by others without the sticky bit (mode 777)");
    expect(() => assertTrustedSocket(sock)).toThrow(UntrustedSocketError);
    fs.chmodSync(shared, 0o1777); // as /tmp: others may not rename what is ours
    expect(checkSocketTrust(sock)).toBeUndefined();
    fs.chmodSync(shared, 0o755);
    expect(checkSocketTrust(sock)).toBeUndefined();
  });

  it("refuses a directory owned by someone else, naming it, its owner and what to do", () => {
    const p = checkSocketTrust(path.join(dir, "mcpd.sock"), other);
    expect(p).toEqual({
      path: dir,
      ownerUid: me,
      message: expect.stringContaining(`socket directory ${dir} is owned by uid ${me}`) as unknown,
    });
    expect(p?.message).toContain(`not by you (uid ${other})`);
    expect(p?.message).toContain("set MCPD_HOME (or XDG_RUNTIME_DIR) to a directory only you can write");
  });

  it.each(["777", "770", "703", "1777"])("refuses a directory of ours with mode %s, naming the chmod fix", (octal) => {
    fs.chmodSync(dir, Number.parseInt(octal, 8));
    const p = checkSocketTrust(path.join(dir, "mcpd.sock"));
    expect(p?.path).toBe(dir);
    expect(p?.message).toContain(`socket directory ${dir} is writable by others (mode ${octal.slice(-3)}); run: chmod 700 ${dir}`);
  });

  it("follows a symbolic link to the directory only when the link is ours too", async () => {
    const real = path.join(dir, "real");
    fs.mkdirSync(real, { mode: 0o700 });
    const link = path.join(dir, "link");
    fs.symlinkSync(real, link);
    await listen(path.join(real, "mcpd.sock"));
    expect(checkSocketTrust(path.join(link, "mcpd.sock"))).toBeUndefined();
    // The same link seen by another uid: the link itself is not theirs.
    expect(checkSocketTrust(path.join(link, "mcpd.sock"), other)?.message).toContain(
      `socket directory ${link} is a symbolic link owned by uid ${me}`,
    );
    // A link to a directory others can write is judged by that directory.
    fs.chmodSync(real, 0o777);
    expect(checkSocketTrust(path.join(link, "mcpd.sock"))?.message).toContain("is writable by others (mode 777)");
  });

  // A socket owned by another user inside a directory of ours needs chown: security-squatting.test.ts.
  it("refuses a socket that is a symbolic link", async () => {
    const real = path.join(dir, "real.sock");
    await listen(real);
    const link = path.join(dir, "mcpd.sock");
    fs.symlinkSync(real, link);
    expect(checkSocketTrust(link)).toMatchObject({
      path: link,
      message: `${link} is a symbolic link; set MCPD_SOCKET to the socket itself`,
    });
  });

  it("assertTrustedSocket throws MCPD_UNTRUSTED_SOCKET prefixed 'Refusing to connect to mcpd'", () => {
    fs.chmodSync(dir, 0o777);
    const sock = path.join(dir, "mcpd.sock");
    let err: unknown;
    try {
      assertTrustedSocket(sock);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UntrustedSocketError);
    expect((err as UntrustedSocketError).code).toBe("MCPD_UNTRUSTED_SOCKET");
    expect((err as UntrustedSocketError).message).toMatch(/^Refusing to connect to mcpd: socket directory .* is writable by others/);
    expect((err as UntrustedSocketError).path).toBe(dir);
  });
});
