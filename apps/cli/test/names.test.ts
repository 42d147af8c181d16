import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireBwrap } from "../../platform/test/sandbox-harness.ts";
import { runCli, runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

const bwrap = requireBwrap();

describe("resources named by their names where the API takes ids", () => {
  let p: TestPlatform;
  const config = tempConfigDir();
  let env: Record<string, string>;
  const ids = { org: "", demo: "", other: "", box: "", otherBox: "", slugged: "", twins: [] as string[] };

  beforeAll(async () => {
    p = await startTestPlatform();
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    ids.org = (await sdk.request("createOrganization", { body: { name: "Acme" } })).id;
    // A second organization: none is the caller's only one.
    await sdk.request("createOrganization", { body: { name: "Globex" } });
    const project = (name: string) => sdk.request("createProject", { path: { orgId: ids.org }, body: { name } });
    ids.demo = (await project("demo")).id;
    ids.other = (await project("other")).id;
    const sandbox = (projectId: string, body: { name: string; slug?: string; start?: boolean }) =>
      sdk.request("createSandbox", { path: { projectId }, body });
    ids.box = (await sandbox(ids.demo, { name: "box1", start: bwrap.available })).id;
    ids.slugged = (await sandbox(ids.demo, { name: "Build box", slug: "build" })).id;
    // The same name in another project is not a second match.
    ids.otherBox = (await sandbox(ids.other, { name: "box1" })).id;
    ids.twins = [(await sandbox(ids.demo, { name: "twin" })).id, (await sandbox(ids.demo, { name: "twin" })).id];
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: p.url, AGENTPLANE_TOKEN: p.ownerToken };
  }, 120_000);
  afterAll(async () => {
    await p?.close();
    config.remove();
  });

  const idOf = async (argv: string[], extra: Record<string, string> = {}) => {
    const ran = await runInProcess([...argv, "--json", "id"], { ...env, ...extra });
    expect(ran.stderr).toBe("");
    return (JSON.parse(ran.stdout) as { id: string }).id;
  };

  it("finds an organization, a project and a sandbox by name, and a sandbox by its slug", async () => {
    expect(await idOf(["orgs", "get", "Acme"])).toBe(ids.org);
    expect(await idOf(["projects", "get", "demo", "--org", "Acme"])).toBe(ids.demo);
    expect(await idOf(["sandboxes", "get", "box1", "--project", "demo", "--org", "Acme"])).toBe(ids.box);
    expect(await idOf(["sandboxes", "get", "build", "--project", ids.demo])).toBe(ids.slugged);
    expect(await idOf(["sandboxes", "get", "Build box", "--project", ids.demo])).toBe(ids.slugged);
    // The defaults may be names too: AGENTPLANE_ORG, AGENTPLANE_PROJECT and `config set`.
    expect(await idOf(["sandboxes", "get", "box1"], { AGENTPLANE_ORG: "Acme", AGENTPLANE_PROJECT: "other" })).toBe(
      ids.otherBox,
    );
    expect((await runInProcess(["config", "set", "org", "Acme"], env)).code).toBe(0);
    expect((await runInProcess(["config", "set", "project", "demo"], env)).code).toBe(0);
    expect(await idOf(["sandboxes", "get", "box1"])).toBe(ids.box);
  });

  it("refuses a name that matches no resource, or several, naming them", async () => {
    const none = await runCli(["sandboxes", "get", "nope", "--project", ids.demo], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(
      `error: no sandbox is named "nope" in ${ids.demo}: \`agentplane sandboxes list --project ${ids.demo}\` lists them, or pass its id\n`,
    );
    const several = await runCli(["sandboxes", "delete", "twin", "--project", ids.demo, "--yes"], env);
    expect(several.code).toBe(1);
    expect(several.stderr).toBe(
      `error: "twin" names more than one sandbox in ${ids.demo}: pass the id of one of ${[...ids.twins].sort().join(", ")}\n`,
    );
    // Neither twin was deleted.
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    for (const id of ids.twins) {
      expect((await sdk.request("getSandbox", { path: { projectId: ids.demo, sandboxId: id } })).id).toBe(id);
    }
    const project = await runCli(["projects", "get", "nowhere", "--org", ids.org], env);
    expect(project.stderr).toBe(
      `error: no project is named "nowhere" in ${ids.org}: \`agentplane projects list --org ${ids.org}\` lists them, or pass its id\n`,
    );
  });

  it("takes a value shaped like an id as an id, without looking it up", async () => {
    const missing = await runCli(["sandboxes", "get", "sbx_nope", "--project", ids.demo], env);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain("Sandbox sbx_nope was not found");
  });

  it("completes names that name one resource alone, beside the ids", async () => {
    const complete = async (words: string[], extra: Record<string, string> = {}) => {
      const ran = await runInProcess(["__complete", ...words], { ...env, ...extra });
      expect(ran.code).toBe(0);
      return ran.stdout.split("\n").filter(Boolean);
    };
    const inDemo = { AGENTPLANE_ORG: "Acme", AGENTPLANE_PROJECT: "demo" };
    const sandboxes = await complete(["sandboxes", "get", ""], inDemo);
    expect(sandboxes).toEqual(expect.arrayContaining([ids.box, ids.slugged, ...ids.twins, "box1", "build"]));
    // A name with a space is not typed into the command line; two sandboxes share "twin".
    expect(sandboxes).not.toContain("Build box");
    expect(sandboxes).not.toContain("twin");
    expect(await complete(["sandboxes", "get", "bu"], inDemo)).toEqual(["build"]);
    expect(await complete(["projects", "get", ""], inDemo)).toEqual(
      expect.arrayContaining([ids.demo, ids.other, "demo", "other"]),
    );
    expect(await complete(["sandboxes", "list", "--org", "Gl"])).toEqual(["Globex"]);
    expect(await complete(["sandboxes", "list", "--project", "ot"], inDemo)).toEqual(["other"]);
    // What completion offers, the command takes.
    const box = (await complete(["sandboxes", "get", "box"], inDemo))[0] as string;
    expect(await idOf(["sandboxes", "get", box], inDemo)).toBe(ids.box);
  });

  it("says in the help that an argument may be a name", async () => {
    const help = await runInProcess(["sandboxes", "get", "--help"], env);
    expect(help.stdout).toMatch(/ sandbox +the sandbox's id \(sbx_…\) or name/);
    const exec = await runInProcess(["sandboxes", "exec", "--help"], env);
    expect(exec.stdout).toMatch(/ sandbox +the sandbox's id \(sbx_…\) or name/);
  });

  it.skipIf(!bwrap.available)(`runs a command in a sandbox named by its name${bwrap.reason}`, async () => {
    const byProject = { ...env, AGENTPLANE_PROJECT: ids.demo };
    const exec = await runCli(["sandboxes", "exec", "box1", "--", "sh", "-c", "echo named; exit 7"], byProject);
    expect(exec).toMatchObject({ code: 7, stdout: "named\n" });
    const run = await runInProcess(
      ["sandboxes", "run", "--sandbox-id", "box1", "--command", "echo ran", "--json", "exitCode,stdout"],
      byProject,
    );
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toEqual({ exitCode: 0, stdout: "ran\n" });
    // The project of the body by its name too, found in the organization named by --org.
    const inBody = await runInProcess(
      ["sandboxes", "run", "--project", "demo", "--org", "Acme", "--sandbox-id", "box1", "--command", "echo body"],
      env,
    );
    expect(inBody.stderr).toBe("");
    expect(inBody.stdout).toContain("body");
  });
});
