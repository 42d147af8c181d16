import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { hostname } from "node:os";
import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAIN, runCli, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

// `auth login` on an activated installation runs the sign-in device flow; a person approves it on
// the platform's own /device page, signed in with a browser session or with a pasted token.

interface Login {
  child: ChildProcessWithoutNullStreams;
  userCode: string;
  stderr(): string;
  stdout(): string;
  exited: Promise<number>;
}

function startLogin(url: string, env: Record<string, string>): Promise<Login> {
  const child = spawn(process.execPath, [MAIN, "auth", "login", "--url", url], { env, stdio: "pipe" });
  child.stdin.end();
  let stderr = "";
  let stdout = "";
  child.stdout.on("data", (c: Buffer) => {
    stdout += c;
  });
  const exited = new Promise<number>((resolve) => child.once("exit", (c) => resolve(c ?? -1)));
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
      const m = /one-time code: (\S+)/.exec(stderr);
      if (m && /Then open http:\/\/\S+\/device /.test(stderr)) {
        resolve({ child, userCode: m[1]!, stderr: () => stderr, stdout: () => stdout, exited });
      }
    });
    child.once("exit", () => reject(new Error(`login ended early: ${stderr}`)));
  });
}

/** A browser session of the token's user, as the console's sign-in opens one: the cookie only. */
async function signInBrowser(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/v1/auth/sessions`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(201);
  return res.headers.get("set-cookie")!.split(";")[0]!;
}

/** What a person does on the page: open it, read the form it shows, press a button. */
async function decideOnPage(
  url: string,
  userCode: string,
  decision: "approve" | "deny",
  credential: { cookie: string } | { token: string },
): Promise<{ status: number; html: string }> {
  const cookie = "cookie" in credential ? { cookie: credential.cookie } : {};
  const page = await fetch(`${url}/device?code=${encodeURIComponent(userCode)}`, { headers: cookie });
  const html = await page.text();
  expect(page.status).toBe(200);
  expect(html).toContain("agentplane CLI on ");
  expect(html).toContain(userCode);
  const fields: Record<string, string> = { userCode, decision };
  if ("cookie" in credential) {
    fields.csrfToken = /name="csrfToken" value="([^"]+)"/.exec(html)![1]!;
  } else {
    expect(html).toContain("Sign in to decide");
    fields.token = credential.token;
  }
  const res = await fetch(`${url}/device`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(url).origin, ...cookie },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: res.status, html: await res.text() };
}

const me = (url: string, token: string) =>
  fetch(`${url}/v1/auth/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

describe("auth login on an activated installation: the sign-in device flow end to end", () => {
  let p: TestPlatform;
  const dirs: { remove(): void }[] = [];
  const envFor = () => {
    const config = tempConfigDir();
    dirs.push(config);
    return { PATH: process.env.PATH ?? "", HOME: config.dir, AGENTPLANE_CONFIG_DIR: config.dir, NO_COLOR: "1" };
  };

  beforeAll(async () => {
    p = await startTestPlatform();
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    for (const d of dirs) d.remove();
  });

  it("approved with a browser session: status, token, and logout revoking the minted token", async () => {
    const env = envFor();
    const login = await startLogin(p.url, env);
    const cookie = await signInBrowser(p.url, p.ownerToken);
    const decided = await decideOnPage(p.url, login.userCode, "approve", { cookie });
    expect(decided.status).toBe(200);
    expect(decided.html).toContain("Sign-in approved");
    expect(await login.exited).toBe(0);
    expect(login.stderr()).toMatch(/Logged in to 127\.0\.0\.1:\d+ as /);
    // The person the new token acts for, and the token by its name: not the token's name alone.
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const who = await sdk.request("getMe");
    const member = await sdk.request("getMember", { path: { orgId: who.organizations[0]!.id, userId: who.userId! } });
    const person = member.email ?? member.displayName;
    expect(person).toBeTruthy();
    expect(login.stderr()).toContain(` as ${person} (token "agentplane CLI on ${hostname()}")`);
    expect(login.stdout()).toBe("");

    const token = (await runCli(["auth", "token"], env)).stdout.trim();
    expect(token).toMatch(/^apl_/);
    expect(token).not.toBe(p.ownerToken);
    const status = JSON.parse((await runCli(["auth", "status", "--json"], env)).stdout) as Record<string, string>[];
    expect(status).toEqual([expect.objectContaining({ status: "ok", tokenSource: "store" })]);
    expect((await runCli(["orgs", "list", "--json"], env)).code).toBe(0);

    const logout = await runCli(["auth", "logout"], env);
    expect(logout).toMatchObject({ code: 0 });
    expect(logout.stderr).toContain("token revoked");
    // Revoked on the installation (the gateway may cache a token for about two seconds).
    await expect.poll(() => me(p.url, token), { timeout: 10_000, interval: 500 }).toBe(401);
    expect((await runCli(["orgs", "list"], env)).code).toBe(4);
    expect(await me(p.url, p.ownerToken)).toBe(200);
  }, 90_000);

  it("approved with a pasted token: a new token of that user, never the pasted one", async () => {
    const env = envFor();
    const login = await startLogin(p.url, env);
    const decided = await decideOnPage(p.url, login.userCode, "approve", { token: p.ownerToken });
    expect(decided.status).toBe(200);
    expect(await login.exited).toBe(0);
    const token = (await runCli(["auth", "token"], env)).stdout.trim();
    expect(token).toMatch(/^apl_/);
    expect(token).not.toBe(p.ownerToken);
    expect(await me(p.url, token)).toBe(200);
  }, 90_000);

  it("a forgotten sign-in token shows in tokens mine, without its secret, and is revoked from there", async () => {
    const env = envFor();
    const login = await startLogin(p.url, env);
    expect((await decideOnPage(p.url, login.userCode, "approve", { token: p.ownerToken })).status).toBe(200);
    expect(await login.exited).toBe(0);
    const token = (await runCli(["auth", "token"], env)).stdout.trim();
    const minted = JSON.parse((await runCli(["auth", "whoami", "--json", "id"], env)).stdout) as { id: string };

    // The owner, from elsewhere, finds it among their personal tokens (no organization lists it).
    const owner = { ...envFor(), AGENTPLANE_URL: p.url, AGENTPLANE_TOKEN: p.ownerToken };
    const mine = await runCli(["tokens", "mine", "--all", "--json"], owner);
    expect(mine.code).toBe(0);
    expect(mine.stdout).not.toContain(token.slice(31));
    const items = JSON.parse(mine.stdout) as { id: string; name: string; orgId?: string; token?: string }[];
    const found = items.find((t) => t.id === minted.id);
    expect(found).toMatchObject({ name: expect.stringContaining("agentplane CLI on ") });
    expect(found?.orgId).toBeUndefined();
    expect(found?.token).toBeUndefined();
    const table = await runCli(["tokens", "mine"], owner);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(minted.id);

    expect((await runCli(["tokens", "revoke", minted.id, "--yes"], owner)).code).toBe(0);
    await expect.poll(() => me(p.url, token), { timeout: 10_000, interval: 500 }).toBe(401);
    expect(await me(p.url, p.ownerToken)).toBe(200);
  }, 90_000);

  it("denied on the page: login fails with exit 4 and stores nothing", async () => {
    const env = envFor();
    const login = await startLogin(p.url, env);
    const cookie = await signInBrowser(p.url, p.ownerToken);
    const decided = await decideOnPage(p.url, login.userCode, "deny", { cookie });
    expect(decided.html).toContain("Sign-in denied");
    expect(await login.exited).toBe(4);
    expect(login.stderr()).toContain("the sign-in was denied");
    expect((await runCli(["auth", "token"], env)).code).toBe(4);
  }, 90_000);

  it("logout only forgets a token it did not mint", async () => {
    const env = envFor();
    const orgs = (await (
      await fetch(`${p.url}/v1/orgs`, { headers: { authorization: `Bearer ${p.ownerToken}` } })
    ).json()) as { items: { id: string }[] };
    const created = (await (
      await fetch(`${p.url}/v1/orgs/${orgs.items[0]!.id}/api-tokens`, {
        method: "POST",
        headers: { authorization: `Bearer ${p.ownerToken}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "pasted" }),
      })
    ).json()) as { token: string };
    expect((await runCli(["auth", "login", "--url", p.url, "--with-token"], env, created.token)).code).toBe(0);
    const logout = await runCli(["auth", "logout"], env);
    expect(logout.code).toBe(0);
    expect(logout.stderr).not.toContain("revoked");
    expect(await me(p.url, created.token)).toBe(200);
  }, 60_000);
});
