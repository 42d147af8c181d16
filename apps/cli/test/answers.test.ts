import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../platform/test/sandbox-harness.ts";
import { runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const bwrap = requireBwrap();

describe("answers as people and scripts read them: run's exit code, revoked tokens, lists in an envelope", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  let orgId = "";
  let projectId = "";

  beforeAll(async () => {
    p = await startTestPlatform();
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    orgId = (await sdk.request("createOrganization", { body: { name: "Acme" } })).id;
    projectId = (await sdk.request("createProject", { path: { orgId }, body: { name: "p" } })).id;
    env = {
      AGENTPLANE_CONFIG_DIR: config.dir,
      AGENTPLANE_URL: p.url,
      AGENTPLANE_TOKEN: p.ownerToken,
      AGENTPLANE_ORG: orgId,
      AGENTPLANE_PROJECT: projectId,
    };
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  it.skipIf(!bwrap.available)(`sandboxes run and sessions run exit with the remote code${bwrap.reason}`, async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const box = await sdk.request("createSandbox", { path: { projectId }, body: { name: "run", start: true } });
    const run = (command: string, ...more: string[]) =>
      runCli(
        ["sandboxes", "run", "--sandbox-id", box.id, "--command", JSON.stringify(["sh", "-c", command]), ...more],
        env,
      );
    const failed = await run("echo out; exit 3");
    expect(failed.stderr).toBe("");
    expect(failed.stdout).toMatch(/^exitCode\t3\nstdout\tout ?\n/);
    expect(failed.code).toBe(3);
    // With --json too, and 0 when the command succeeds.
    const json = await run("exit 7", "--json", "exitCode");
    expect(JSON.parse(json.stdout)).toEqual({ exitCode: 7 });
    expect(json.code).toBe(7);
    expect((await run("true")).code).toBe(0);
    // The CLI's own failures keep their codes: an unknown sandbox is 3 only because the API said 404.
    const missing = await runCli(["sandboxes", "run", "--sandbox-id", "sbx_missing", "--command", '["true"]'], env);
    expect(missing.stderr).toMatch(/^error: /);
    expect(missing.code).toBe(3);

    const session = await sdk.request("createShellSession", { path: { projectId }, body: { sandboxId: box.id } });
    const inSession = await runCli(["sessions", "run", session.id, "--command", "sh -c 'exit 5'"], env);
    expect(inSession.stdout).toMatch(/^exitCode\t5\n/);
    expect(inSession.code).toBe(5);
    const help = await runInProcess(["sandboxes", "run", "--help"], env);
    expect(help.stdout).toContain("Exits with the remote command's exit code");
  });

  it("shows whether a token is revoked in the last column, the columns before it where they were", async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const kept = await sdk.request("createApiToken", { path: { orgId }, body: { name: "kept" } });
    const gone = await sdk.request("createApiToken", { path: { orgId }, body: { name: "gone" } });
    expect((await runCli(["tokens", "revoke", gone.id, "--yes"], env)).code).toBe(0);
    const piped = await runInProcess(["tokens", "list"], env);
    expect(piped.stderr).toBe("");
    const rows = piped.stdout
      .trimEnd()
      .split("\n")
      .map((line) => line.split("\t"));
    const row = (id: string) => rows.find((r) => r[0] === id)!;
    // id, name, role, createdAt, orgId, userId as before; then when it was revoked, empty if never.
    expect(row(kept.id).slice(0, 6)).toEqual([kept.id, "kept", kept.role, kept.createdAt, orgId, kept.userId]);
    expect(row(kept.id)).toHaveLength(7);
    expect(row(kept.id)[6]).toBe("");
    const revokedAt = (await sdk.request("getApiToken", { path: { tokenId: gone.id } })).revokedAt;
    expect(revokedAt).toBeTruthy();
    expect(row(gone.id)[6]).toBe(revokedAt);
    const table = await runInProcess(["tokens", "list"], env, true);
    const [head, ...lines] = table.stdout.trimEnd().split("\n");
    // A terminal 100 columns wide: the org and user ids are left out, from the right; the token's
    // own id stays whole, and so does whether it is revoked.
    expect(head).toMatch(/^ID\s+NAME\s+ROLE\s+CREATED AT\s+REVOKED AT$/);
    expect(lines.find((l) => /\sgone\s/.test(l))).toMatch(new RegExp(`^${gone.id}\\s`));
    expect(lines.find((l) => /\skept\s/.test(l))).toMatch(new RegExp(`^${kept.id}\\s`));
    const revokedColumn = head!.indexOf("REVOKED AT");
    expect(lines.find((l) => /\sgone\s/.test(l))!.slice(revokedColumn)).toMatch(/^(now|.* ago)$/);
    expect(lines.find((l) => /\skept\s/.test(l))!.slice(revokedColumn)).toBe("");
  });

  it("prints the list inside an envelope as a table, and the whole answer with --json", async () => {
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const box = await sdk.request("createSandbox", { path: { projectId }, body: { name: "pod" } });
    const created = (await sdk.request("getSandbox", { path: { projectId, sandboxId: box.id } })).createdAt;

    // A Kubernetes List: a row per item as kubectl shows it, not the answer as one JSON cell.
    const pods = await runInProcess(["k8s", "pods", "list"], env);
    expect(pods.stderr).toBe("");
    expect(pods.stdout.split("\n")).toContain(`${projectId}\t${box.id}\tPending\t${created}`);
    const podTable = (await runInProcess(["k8s", "pods", "list"], env, true)).stdout.split("\n");
    expect(podTable[0]).toMatch(/^NAMESPACE\s+NAME\s+STATUS\s+CREATED AT$/);
    const podRow = podTable.find((line) => line.includes(box.id));
    expect(podRow).toMatch(new RegExp(`^${projectId}\\s+${box.id}\\s+Pending\\s+(now|.* ago)$`));
    const podJson = JSON.parse((await runInProcess(["k8s", "pods", "list", "--json"], env)).stdout);
    expect(podJson).toMatchObject({
      apiVersion: "v1",
      kind: "PodList",
      items: expect.arrayContaining([expect.objectContaining({ metadata: expect.objectContaining({ name: box.id }) })]),
    });

    // The providers of a project: the items' own columns; on a terminal the project comes first.
    const providers = await runInProcess(["llm", "providers", "list"], env);
    expect(providers.stderr).toBe("");
    const rows = providers.stdout.trimEnd().split("\n");
    expect(rows.map((r) => r.split("\t")[0])).toEqual(["cloud-a", "cloud-a-alt", "cloud-b"]);
    expect(rows[0]).not.toContain("{");
    const table = (await runInProcess(["llm", "providers", "list"], env, true)).stdout.split("\n");
    expect(table[0]).toBe(`projectId:  ${projectId}`);
    // 100 columns: the last column is left out rather than the endpoint cut short.
    expect(table[2]).toMatch(/^NAME\s+AUTH MODE\s+CREDENTIAL SOURCE\s+CREDENTIAL ID\s+ENDPOINT HOST$/);
    expect(table[3]).toMatch(/^cloud-a\s+none\s+none\s+bedrock-runtime\.us-east-1\.amazonaws\.com$/);
    const wide = (await runInProcess(["llm", "providers", "list"], env, true, 160)).stdout.split("\n");
    expect(wide[2]).toMatch(/^NAME\s+AUTH MODE\s+CREDENTIAL SOURCE\s+CREDENTIAL ID\s+ENDPOINT HOST\s+USABLE$/);
    expect(wide[3]).toMatch(/^cloud-a\s+none\s+none\s+bedrock-runtime\.us-east-1\.amazonaws\.com\s+false$/);
    const json = JSON.parse((await runInProcess(["llm", "providers", "list", "--json"], env)).stdout);
    expect(json).toMatchObject({
      projectId,
      items: [{ name: "cloud-a" }, { name: "cloud-a-alt" }, { name: "cloud-b" }],
    });
    // --json a,b picks among the answer's own fields.
    const picked = await runInProcess(["llm", "providers", "list", "--json", "projectId"], env);
    expect(JSON.parse(picked.stdout)).toEqual({ projectId });
    const wrong = await runInProcess(["llm", "providers", "list", "--json", "name"], env);
    expect(wrong.stderr).toBe("error: unknown JSON field name; available: items, projectId\n");
  });
});
