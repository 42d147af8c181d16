// `agentplane llm request` against a stand-in provider: the path its help gives reaches the
// provider's real route, and a provider's own error body is what the person reads on stderr.

import { createAgentplaneClient } from "@agentplane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalServer, readBody, startLocalServer } from "../../../packages/testkit/src/http.ts";
import { runInProcess, startTestPlatform, type TestPlatform, tempConfigDir } from "./harness.ts";

describe("llm request through a stand-in provider", () => {
  const config = tempConfigDir();
  const seen: { path: string; headers: Record<string, string | string[] | undefined> }[] = [];
  let upstream: LocalServer;
  let p: TestPlatform;
  let env: Record<string, string>;
  let orgId = "";

  beforeAll(async () => {
    // Azure's Anthropic API answers at {resource}/anthropic/v1/messages; anything else is a 404.
    upstream = await startLocalServer(async (req, res) => {
      await readBody(req);
      seen.push({ path: req.url ?? "", headers: req.headers });
      res.setHeader("content-type", "application/json");
      if (req.url !== "/anthropic/v1/messages") {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { code: "404", message: "Resource not found" } }));
        return;
      }
      if (req.headers["anthropic-version"] === undefined) {
        res.statusCode = 400;
        res.end(
          JSON.stringify({
            type: "error",
            error: { type: "invalid_request_error", message: "anthropic-version: header is required" },
          }),
        );
        return;
      }
      const usage = { input_tokens: 5, output_tokens: 4 };
      res.end(JSON.stringify({ id: "msg_1", type: "message", role: "assistant", model: "m-1", content: [], usage }));
    });
    p = await startTestPlatform({
      env: {
        CLOUD_B_API_KEY: "provider-key",
        CLOUD_B_RESOURCE_NAME: "res",
        CLOUD_B_BASE_URL: `${upstream.url}/anthropic/v1`,
      },
    });
    const sdk = createAgentplaneClient({ baseUrl: p.url, token: p.ownerToken });
    const org = await sdk.request("createOrganization", { body: { name: "Acme" } });
    orgId = org.id;
    await sdk.request("createProject", { path: { orgId: org.id }, body: { name: "p" } });
    env = { AGENTPLANE_CONFIG_DIR: config.dir, AGENTPLANE_URL: p.url, AGENTPLANE_TOKEN: p.ownerToken };
  });
  afterAll(async () => {
    await p?.close();
    await upstream?.close();
    config.remove();
  });

  it("gives an example path that reaches the provider's messages route", async () => {
    const help = await runInProcess(["llm", "request", "--help"], env);
    const example = /e\.g\. (\S+)/.exec(help.stdout)?.[1];
    expect(example).toBe("cloud-b/family-1/anthropic/v1/messages");
    seen.length = 0;
    await runInProcess(["llm", "request", example!, "-f", "max_tokens=8"], env);
    expect(seen.map((s) => s.path)).toEqual(["/anthropic/v1/messages"]);
  });

  it("says what the provider said when it refuses the call, not only its status", async () => {
    const wrong = await runInProcess(["llm", "request", "cloud-b/family-1/v1/messages", "-f", "max_tokens=8"], env);
    // A path that is no model operation of the route never reaches the provider: the proxy's 404 names them.
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(
      /^error: Not Found: "v1\/messages" is not a model operation of [^;]+; one of .*anthropic\/v1\/messages/,
    );
    const refused = await runInProcess(
      ["llm", "request", "cloud-b/family-1/anthropic/v1/messages", "-f", "max_tokens=8", "--json"],
      { ...env },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("HTTP 400: anthropic-version: header is required");
    // --json still prints the provider's body unchanged.
    expect(JSON.parse(refused.stdout)).toEqual({
      type: "error",
      error: { type: "invalid_request_error", message: "anthropic-version: header is required" },
    });
  });

  it("sends -H headers the provider needs, as the docs' curl does", async () => {
    seen.length = 0;
    const path = "cloud-b/family-1/anthropic/v1/messages";
    const ok = await runInProcess(
      ["llm", "request", path, "-H", "anthropic-version: 2023-06-01", "-f", "max_tokens=8", "--json", "id"],
      env,
    );
    expect(ok.stderr).toBe("");
    expect(JSON.parse(ok.stdout)).toEqual({ id: "msg_1" });
    expect(seen[0]?.headers["anthropic-version"]).toBe("2023-06-01");
    const bad = await runInProcess(["llm", "request", path, "-H", "no colon here", "-f", "max_tokens=8"], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('error: -H takes name:value, e.g. anthropic-version:2023-06-01, not "no colon here"\n');
  });

  it("shows usage's groups and a time series as tables, not as a line of JSON", async () => {
    const argv = ["usage", "list", "--org", orgId];
    // The successful call above is metered once its usage is recorded.
    let piped = "";
    for (let i = 0; i < 50 && !piped.startsWith("m-1\t"); i++) {
      piped = (await runInProcess(argv, env)).stdout;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Piped: the rows alone, the group and its cost first.
    expect(piped).toMatch(/^m-1\t[\d.]+\t1\t5\t4\t/);
    const terminal = await runInProcess(argv, env, true);
    expect(terminal.stdout).toMatch(/^groupBy: +model$/m);
    expect(terminal.stdout).toMatch(/^KEY +COST USD +REQUESTS +INPUT TOKENS/m);
    expect(terminal.stdout).not.toContain("groups:");
    const series = await runInProcess(["audit", "timeseries", "--org", orgId], env, true);
    expect(series.stdout).toMatch(/^interval: +hour$/m);
    expect(series.stdout).toMatch(/^START +COUNT +DENIED +ERROR$/m);
    expect(series.stdout).not.toContain("buckets:");
    // --json stays the API's answer.
    const json = JSON.parse((await runInProcess([...argv, "--json"], env)).stdout);
    expect(json.groups[0]).toMatchObject({ key: "m-1", requests: 1, inputTokens: 5 });
  });
});
