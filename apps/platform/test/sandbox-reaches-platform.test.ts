import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CREDS, type FakeUpstream, startFakeUpstream } from "../../inference-proxy/test/upstream.ts";
import { requireSandboxCurl } from "../../sandbox-svc/test/egress-fixture.ts";
import { eventually, type GovernedPlatform, startGovernedPlatform } from "./governance-harness.ts";
import { requireBwrap } from "./sandbox-harness.ts";

const bwrap = requireBwrap();
const curl = requireSandboxCurl();

const HAIKU = "us.anthropic.claude-haiku-4-5-20251001-v1:0";

interface Exec {
  exitCode: number;
  stdout: string;
  stderr: string;
}

interface AuditItem {
  action: string;
  outcome: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

/**
 * The agent runtime's sandbox switch and any client inside a sandbox call the platform with the
 * sandbox's own token at `AGENTPLANE_API_URL`. The sandbox's network has only the egress proxy, so
 * that address must be reachable through it — and only that one of the host's private addresses.
 */
describe.skipIf(!bwrap.available || !curl.available)(
  `a sandbox reaches its own platform through the egress proxy${bwrap.reason}${curl.reason}`,
  () => {
    let h: GovernedPlatform;
    let up: FakeUpstream;
    let box: string;
    let other: string;

    beforeAll(async () => {
      up = await startFakeUpstream();
      h = await startGovernedPlatform({ CLOUD_A_BEARER_TOKEN: CREDS.bearer, CLOUD_A_ENDPOINT_URL: up.url });
      const [a, b] = await Promise.all([
        h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, { name: "agent-box", start: true }),
        h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, { name: "other-box" }),
      ]);
      expect([a.status, b.status]).toEqual([201, 201]);
      box = a.body.id;
      other = b.body.id;
    }, 240_000);
    afterAll(async () => {
      await h?.close();
      await up?.close();
    });

    /** Runs a shell script in the sandbox (as the admin) and returns what it printed. */
    const run = async (script: string): Promise<Exec> => {
      const r = await h.call<Exec>("POST", "/v1/shell/exec", {
        projectId: h.projectId,
        sandboxId: box,
        command: script,
        timeoutMs: 20_000,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    /** `curl` inside the sandbox with its own token; prints the body, then the status on the last line. */
    const api = (args: string) =>
      run(`curl -sS -w '\\n%{http_code}' -H "authorization: Bearer $AGENTPLANE_TOKEN" ${args}`);
    const split = (out: Exec) => {
      const lines = out.stdout.trimEnd().split("\n");
      const status = Number(lines.pop());
      return { status, body: lines.join("\n") };
    };

    it("calls the API as itself: who it is, its effective policy, a command in itself", async () => {
      const me = split(await api('"$AGENTPLANE_API_URL/v1/auth/me"'));
      expect(me.status).toBe(200);
      expect(JSON.parse(me.body)).toMatchObject({ type: "sandbox", sandboxId: box, projectId: h.projectId });

      const policy = split(
        await api(
          '"$AGENTPLANE_API_URL/v1/projects/$AGENTPLANE_PROJECT_ID/sandboxes/$AGENTPLANE_SANDBOX_ID/effective-policy"',
        ),
      );
      expect(policy.status).toBe(200);
      expect(JSON.parse(policy.body)).toHaveProperty("actions");

      const self = split(
        await api(
          `-H 'content-type: application/json' "$AGENTPLANE_API_URL/v1/shell/exec" -d "{\\"projectId\\":\\"$AGENTPLANE_PROJECT_ID\\",\\"sandboxId\\":\\"$AGENTPLANE_SANDBOX_ID\\",\\"command\\":[\\"echo\\",\\"from inside\\"]}"`,
        ),
      );
      expect(self.status).toBe(200);
      expect(JSON.parse(self.body)).toMatchObject({ exitCode: 0, stdout: "from inside\n" });

      // Never another sandbox, and nothing a project member does.
      const elsewhere = split(
        await api(
          `-H 'content-type: application/json' "$AGENTPLANE_API_URL/v1/shell/exec" -d '{"projectId":"${h.projectId}","sandboxId":"${other}","command":"true"}'`,
        ),
      );
      expect(elsewhere.status).toBe(404);
      const list = split(await api('"$AGENTPLANE_API_URL/v1/projects/$AGENTPLANE_PROJECT_ID/sandboxes"'));
      expect(list.status).toBe(403);
    }, 120_000);

    it("a Node client inside (the agent runtime's sandbox switch) reaches it with fetch as is", async () => {
      // A Node 24 binary where the sandbox can run it (the host's own may be older).
      const sandbox = h.platform.services.sandbox as unknown as { driver: { workspaceDir(id: string): string } };
      copyFileSync(process.execPath, join(sandbox.driver.workspaceDir(box), "node"));
      const script = `fetch(new URL("v1/auth/me", process.env.AGENTPLANE_API_URL + "/"), { headers: { authorization: "Bearer " + process.env.AGENTPLANE_TOKEN } }).then(async (r) => console.log(r.status, (await r.json()).sandboxId))`;
      const out = await run(`/workspace/node -e '${script}'`);
      expect(out.stdout.trim(), out.stderr).toBe(`200 ${box}`);
    }, 120_000);

    it("calls a model through /v1/llm with its own token", async () => {
      const before = up.seen.length;
      const answer = split(
        await api(
          `-H 'content-type: application/json' "$AGENTPLANE_API_URL/v1/llm/cloud-a/us-east-1/model/${encodeURIComponent(HAIKU)}/invoke" -d '{"anthropic_version":"bedrock-2023-05-31","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}'`,
        ),
      );
      expect(answer.status, answer.body).toBe(200);
      expect(up.seen.length).toBe(before + 1);
    }, 120_000);

    it("reaches no other address of the host: loopback by address or by name stays refused", async () => {
      const port = new URL(h.platform.publicUrl).port;
      for (const target of [`http://127.0.0.1:${port}/v1/auth/me`, `http://localhost:${port}/v1/auth/me`]) {
        // Straight at the proxy (NO_PROXY would send loopback to the sandbox's own loopback).
        const out = split(await run(`curl -sS -w '\\n%{http_code}' --noproxy '' -x http://127.0.0.1:3128 ${target}`));
        expect(out.status, target).toBe(403);
        expect(out.body).toMatch(/private address|No policy permits egress/);
      }
    }, 120_000);

    it("stays open under an egress policy for other hosts; a rule naming the platform closes it, audited", async () => {
      const create = async (name: string, cedar: string) => {
        const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, { name, cedar });
        expect(policy.status, JSON.stringify(policy.body)).toBe(201);
        const binding = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policy-bindings`, {
          policyId: policy.body.id,
        });
        expect(binding.status, JSON.stringify(binding.body)).toBe(201);
        return binding.body.id;
      };
      // Egress is now governed: only the registry is permitted, yet the platform stays reachable.
      await create(
        "registry-only",
        `@id("reach-registry")
permit(principal, action == Action::"sandbox:egress", resource) when { context.host == "registry.test" };
@id("run-anything")
permit(principal, action == Action::"sandbox:exec", resource);`,
      );
      const governed = await eventually(
        async () => split(await api('"$AGENTPLANE_API_URL/v1/auth/me"')),
        (r) => r.status === 200,
      );
      expect(governed.status).toBe(200);

      const cut = await create(
        "no-platform",
        `@id("no-platform-from-sandboxes")
forbid(principal, action == Action::"sandbox:egress", resource) when { context.platform };`,
      );
      const refused = await eventually(
        async () => split(await api('"$AGENTPLANE_API_URL/v1/auth/me"')),
        (r) => r.status === 403,
      );
      expect(JSON.parse(refused.body)).toMatchObject({ ruleId: "no-platform-from-sandboxes" });
      const records = await eventually(
        async () =>
          (await h.call<{ items: AuditItem[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=sandbox.egress_denied`))
            .body.items ?? [],
        (items) => items.some((i) => i.details?.ruleId === "no-platform-from-sandboxes"),
      );
      expect(records.find((i) => i.details?.ruleId === "no-platform-from-sandboxes")).toMatchObject({
        outcome: "denied",
        targetId: box,
        details: { host: "agentplane.internal" },
      });
      expect((await h.call("DELETE", `/v1/projects/${h.projectId}/policy-bindings/${cut}`)).status).toBe(204);
    }, 120_000);
  },
);
