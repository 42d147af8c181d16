// The code examples of the reference pages run as written against a freshly started all-in-one
// platform. docs/models.md: each provider's TypeScript block with the official SDK it names, the
// curl call and the CLI call, the providers being local stand-ins speaking their real wire
// formats; a base URL, a header or a path the gateway no longer takes fails here, and so does a
// caller's token that reaches a provider. packages/sdk/README.md: its example, with the generated
// SDK, pointed at the platform.
import { execFile, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREDS, type FakeUpstream, startFakeUpstream } from "../../apps/inference-proxy/test/upstream.ts";
import { callApi, freePort, REPO_ROOT, type Spawned, spawnNode } from "./processes.ts";

// Asynchronous: the provider stand-ins answer from this process while a block runs.
const run = promisify(execFile);
const SDK_README = readFileSync(join(REPO_ROOT, "packages", "sdk", "README.md"), "utf8");
const OWNER_TOKEN = `models-owner-${"x".repeat(32)}`;
const DOC = readFileSync(join(REPO_ROOT, "docs", "models.md"), "utf8");
/** Where the SDKs the page names are dependencies, so its imports resolve as they are written. */
const SDK_HOME = join(REPO_ROOT, "apps", "inference-proxy");

interface Block {
  section: string;
  lang: string;
  code: string;
}

/** The fenced blocks of a Markdown page, each with the `##` heading it stands under. */
export function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = [];
  let section = "";
  for (const m of markdown.matchAll(/^## (.*)$|^```(\w+)\n([\s\S]*?)^```$/gm)) {
    if (m[1] !== undefined) section = m[1];
    else blocks.push({ section, lang: m[2] ?? "", code: m[3] ?? "" });
  }
  return blocks;
}

/**
 * What each section's calls reach at the provider: the path and the provider's own credential.
 * The page's blocks that only build a client are given one call with it.
 */
const EXPECTED: Record<string, Array<{ path: string; auth: string }>> = {
  "cloud-a (Bedrock runtime: invoke, converse)": [
    { path: "/model/us.anthropic.claude-sonnet-4-5-20250929-v1:0/invoke", auth: "bearer" },
  ],
  "cloud-a-alt family-1 (Anthropic Messages API)": [{ path: "/anthropic/v1/messages", auth: "x-api-key" }],
  "cloud-a-alt family-2 (OpenAI-style API)": [{ path: "/v1/chat/completions", auth: "bearer" }],
  "cloud-b family-1 (Anthropic on Foundry)": [{ path: "/anthropic/v1/messages", auth: "x-api-key" }],
  "cloud-b family-2 (Azure OpenAI)": [
    { path: "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21", auth: "api-key" },
    { path: "/openai/v1/chat/completions", auth: "api-key" },
  ],
  "Plain HTTP": [
    { path: "/anthropic/v1/messages", auth: "x-api-key" },
    { path: "/anthropic/v1/messages", auth: "x-api-key" },
  ],
};

const hasPythonSdk = spawnSync("python3", ["-c", "import anthropic"]).status === 0;

/** The block as a module: `URL`, `token` and `messages` defined, then a call on each client it only builds. */
function runnable(code: string): string {
  const calls = [...code.matchAll(/const (\w+) = new (\w+)\(/g)]
    .filter(([, name]) => !new RegExp(`await ${name}\\.`).test(code))
    .map(([, name, kind]) =>
      kind === "OpenAI" || kind === "AzureOpenAI"
        ? `await ${name}.chat.completions.create({ model: "gpt-4o", messages });`
        : `await ${name}.messages.create({ model: "claude-sonnet-4-6", max_tokens: 64, messages });`,
    );
  return [
    code.match(/^import .*$/gm)?.join("\n") ?? "",
    "const URL = process.env.URL!; const token = process.env.TOKEN!;",
    'const messages = [{ role: "user" as const, content: "hi" }];',
    code.replace(/^import .*$/gm, ""),
    ...calls,
  ].join("\n");
}

describe("docs/models.md and the SDK README run as written", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-models-"));
  const configDir = mkdtempSync(join(tmpdir(), "agentplane-models-cli-"));
  let up: FakeUpstream;
  let platform: Spawned | undefined;
  let base = "";
  let orgId = "";
  let calls = 0;

  beforeAll(async () => {
    up = await startFakeUpstream();
    const port = await freePort();
    platform = spawnNode("apps/platform/src/main.ts", [], {
      PORT: String(port),
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      AGENTPLANE_BOOTSTRAP_TOKEN: OWNER_TOKEN,
      CLOUD_A_BEARER_TOKEN: CREDS.bearer,
      CLOUD_B_API_KEY: CREDS.cloudBKey,
      CLOUD_B_RESOURCE_NAME: "docs-example",
      CLOUD_A_ENDPOINT_URL: up.url,
      CLOUD_A_ALT_BASE_URL: `${up.url}/anthropic`,
      CLOUD_B_BASE_URL: `${up.url}/anthropic/v1`,
      CLOUD_B_OPENAI_BASE_URL: `${up.url}/openai/v1`,
    });
    await platform.waitFor(/Health\s+http:\/\/\S+\/health/, 120_000);
    base = `http://127.0.0.1:${port}`;
    // The short form bills the caller's only project: the owner gets one.
    const orgs = await callApi<{ items: Array<{ id: string }> }>(base, OWNER_TOKEN, "GET", "/v1/orgs");
    orgId = orgs.body.items[0]?.id ?? "";
    const project = await callApi(base, OWNER_TOKEN, "POST", `/v1/orgs/${orgId}/projects`, { name: "models" });
    expect(project.status).toBe(201);
  }, 150_000);

  afterAll(async () => {
    await platform?.stop();
    await up?.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
  });

  const blocks = blocksOf(DOC);
  const sections = [...new Set(blocks.filter((b) => b.lang !== "python").map((b) => b.section))];

  it("has a block for every provider family, and nothing this test does not expect", () => {
    expect(sections).toEqual(Object.keys(EXPECTED));
  });

  it.each(sections)("%s", async (section) => {
    up.seen.length = 0;
    for (const block of blocks.filter((b) => b.section === section && b.lang !== "python")) {
      const env = { ...process.env, URL: base, TOKEN: OWNER_TOKEN };
      const result = await (block.lang === "ts"
        ? run(process.execPath, ["--input-type=module-typescript", "-e", runnable(block.code)], {
            cwd: SDK_HOME,
            env,
            timeout: 60_000,
          })
        : run(
            "bash",
            [
              "-euo",
              "pipefail",
              "-c",
              `agentplane() { "${process.execPath}" "${join(REPO_ROOT, "apps/cli/bin/agentplane.mjs")}" "$@"; }\n${block.code}`,
            ],
            {
              env: {
                ...env,
                AGENTPLANE_URL: base,
                AGENTPLANE_TOKEN: OWNER_TOKEN,
                AGENTPLANE_CONFIG_DIR: configDir,
                AGENTPLANE_KEYRING: "off",
              },
              timeout: 60_000,
            },
          )
      ).catch((e: { stdout?: string; stderr?: string; message: string }) => {
        throw new Error(`${section} (${block.lang}) failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
      });
      if (block.lang === "sh") expect(result.stdout).toContain("Hello from upstream");
    }
    expect(up.seen.map((s) => ({ path: decodeURIComponent(s.path), auth: s.auth }))).toEqual(EXPECTED[section]);
    // The provider's key went out; the Agentplane token never left the control plane.
    for (const s of up.seen) expect(JSON.stringify(s.headers)).not.toContain(OWNER_TOKEN);
    calls += up.seen.length;
  });

  // Registered only where python3 has the anthropic package (PyPI cannot be reached here).
  (hasPythonSdk ? describe : describe.skip)("the Python block", () => {
    it("runs as written", async () => {
      const python = blocks.filter((b) => b.lang === "python");
      expect(python.length).toBeGreaterThan(0);
      for (const block of python) {
        up.seen.length = 0;
        const script = `import os\nURL = os.environ["URL"]\ntoken = os.environ["TOKEN"]\n${block.code}\nclient.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=[{"role": "user", "content": "hi"}])\n`;
        await run("python3", ["-c", script], {
          env: { ...process.env, URL: base, TOKEN: OWNER_TOKEN },
          timeout: 60_000,
        });
        expect(up.seen.map((s) => s.auth)).toEqual(["x-api-key"]);
        calls += up.seen.length;
      }
    });
  });

  it("meters every call into the organization's usage costs", async () => {
    const pythonCalls = hasPythonSdk ? blocks.filter((b) => b.lang === "python").length : 0;
    expect(calls).toBe(Object.values(EXPECTED).flat().length + pythonCalls);
    await expect
      .poll(async () => {
        const costs = await callApi<{ total: { requests: number } }>(
          base,
          OWNER_TOKEN,
          "GET",
          `/v1/orgs/${orgId}/usage-costs`,
        );
        return costs.body.total?.requests;
      })
      .toBe(calls);
  });

  it("packages/sdk/README.md: the example creates an organization and a project, pages its projects and reads a problem", async () => {
    const [block] = blocksOf(SDK_README).filter((b) => b.lang === "ts");
    let code = (block?.code ?? "").replace('"https://agentplane.example.com"', "process.env.URL!");
    expect(code).toContain("process.env.URL!");
    // Its last call's answer, checked.
    code += '\nif (data?.id !== org.id) throw new Error("sdk.api.GET answered another organization");\n';
    const result = await run(process.execPath, ["--input-type=module-typescript", "-e", code], {
      cwd: join(REPO_ROOT, "packages", "sdk"),
      env: { ...process.env, URL: base, AGENTPLANE_TOKEN: OWNER_TOKEN },
      timeout: 60_000,
    });
    // The projects of the new organization, one name a line, then the refused getProject.
    expect(result.stdout.split("\n")).toContain("agents");
    expect(result.stderr).toMatch(/^404 not-found Project prj_nope was not found [0-9a-f-]{36}$/m);
  });
});
