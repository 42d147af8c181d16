import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventually, type GovernedPlatform, startGovernedPlatform } from "./governance-harness.ts";
import { bearerProtocol, execQuery, openExec, requireBwrap } from "./sandbox-harness.ts";

const bwrap = requireBwrap();

/** The README's example: agents of this project run only git and npm and reach only the registry. */
const AGENT_POLICY = `
@id("agents-run-git-npm")
permit(principal, action == Action::"sandbox:exec", resource)
when { ["git", "npm"].contains(context.program) };

@id("agents-reach-registry")
permit(principal, action == Action::"sandbox:egress", resource)
when { context.host == "registry.test" };
`;

const ADMISSION_POLICY = `
@id("sandboxes-allowed")
permit(
  principal,
  action in [Action::"sandbox:create", Action::"sandbox:update", Action::"sandbox:start", Action::"sandbox:expose-port"],
  resource
);

@id("quarantined-stay-stopped")
forbid(principal, action == Action::"sandbox:start", resource) when { resource.hasTag("quarantine") };

@id("no-public-ports")
forbid(principal, action == Action::"sandbox:expose-port", resource);

@id("no-cloud-keys-in-env")
forbid(principal, action == Action::"sandbox:create", resource)
when { context.envNames.contains("AWS_SECRET_ACCESS_KEY") };
`;

interface Problem {
  type: string;
  status: number;
  detail: string;
  ruleId?: string | null;
  [key: string]: unknown;
}

interface AuditItem {
  action: string;
  outcome: string;
  targetId?: string;
  details?: Record<string, unknown>;
}

describe.skipIf(!bwrap.available)(`governance enforced by sandboxes, end to end${bwrap.reason}`, () => {
  let h: GovernedPlatform;
  let box: string;

  beforeAll(async () => {
    h = await startGovernedPlatform();
    const created = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
      name: "agent-box",
      start: true,
    });
    expect(created.status).toBe(201);
    box = created.body.id;
  }, 240_000);
  // A failed test leaves no binding behind to confuse the next.
  const bound = new Set<string>();
  afterEach(async () => {
    for (const id of bound) await h.call("DELETE", `/v1/projects/${h.projectId}/policy-bindings/${id}`);
    bound.clear();
  });
  afterAll(async () => {
    await h?.close();
  });

  const exec = (command: string | string[]) =>
    h.call<{ exitCode: number; stdout: string; stderr: string } & Problem>("POST", "/v1/shell/exec", {
      projectId: h.projectId,
      sandboxId: box,
      command,
      timeoutMs: 20_000,
    });
  const trail = async (action: string) =>
    (await h.call<{ items: AuditItem[] }>("GET", `/v1/orgs/${h.orgId}/audit-trail?action=${action}&limit=100`)).body
      .items ?? [];
  const bind = async (cedar: string, name: string, mode?: "dryrun") => {
    const policy = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policies`, { name, cedar });
    expect(policy.status).toBe(201);
    const binding = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/policy-bindings`, {
      policyId: policy.body.id,
      ...(mode ? { mode } : {}),
    });
    expect(binding.status).toBe(201);
    bound.add(binding.body.id);
    return binding.body.id;
  };
  const unbind = async (bindingId: string) => {
    expect((await h.call("DELETE", `/v1/projects/${h.projectId}/policy-bindings/${bindingId}`)).status).toBe(204);
    bound.delete(bindingId);
  };

  it("a bound policy lets agents run only git and npm, with the rule in the audit trail, until it is unbound", async () => {
    const bindingId = await bind(AGENT_POLICY, "agents-git-npm");

    const git = await eventually(
      () => exec(["git", "--version"]),
      (r) => r.status === 200,
    );
    expect(git.body.stdout).toMatch(/^git version/);
    const denied = await eventually(
      () => exec(["curl", "--version"]),
      (r) => r.status === 403,
    );
    expect(denied.status).toBe(403);
    expect(denied.body.type).toMatch(/policy-denied$/);
    expect(denied.body.ruleId).toBe("agents-run-git-npm");
    expect(denied.body.detail).toContain("agents-run-git-npm");
    expect(JSON.stringify(denied.body)).not.toContain("context.program");
    // A shell line runs as `sh -c`: not git, whatever it starts with.
    expect((await exec("git --version")).status).toBe(403);
    // So is every command of a shell session.
    const session = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/shell-sessions`, {
      sandboxId: box,
    });
    expect(session.status).toBe(201);
    const inSession = await h.call<Problem>(
      "POST",
      `/v1/projects/${h.projectId}/shell-sessions/${session.body.id}/commands`,
      { command: "git --version" },
    );
    expect(inSession.status).toBe(403);
    expect(inSession.body.ruleId).toBe("agents-run-git-npm");
    // The WebSocket exec is governed the same way.
    const ws = await openExec(
      `${h.url.replace("http", "ws")}/v1/projects/${h.projectId}/sandboxes/${box}/exec${execQuery(["curl", "-V"])}`,
      ["v5.channel.k8s.io", bearerProtocol(h.adminToken)],
    );
    expect(ws).toEqual({ refused: 403 });

    const execDenials = await eventually(
      () => trail("policy.denied"),
      (items) => items.some((i) => i.details?.governedAction === "sandbox:exec"),
    );
    expect(execDenials.find((i) => i.details?.governedAction === "sandbox:exec")).toMatchObject({
      outcome: "denied",
      targetId: box,
      details: { ruleId: "agents-run-git-npm", bindingId, mode: "enforce" },
    });
    // Unbound: any command runs again.
    await unbind(bindingId);
    const again = await eventually(
      () => exec(["curl", "--version"]),
      (r) => r.status === 200,
    );
    expect(again.status).toBe(200);
  }, 120_000);

  it("admission: a public port, a cloud key in env, a quarantined start or a rollback to a public port is refused by rule, and admitted once unbound", async () => {
    // Made before the policy: one to start later, one with a public port in its first revision.
    const quarantined = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
      name: "quarantined",
      labels: { quarantine: "yes" },
    });
    const revised = await h.call<{ id: string }>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
      name: "revised",
      ports: [{ port: 8080, visibility: "public" }],
    });
    const privatized = await h.call("PATCH", `/v1/projects/${h.projectId}/sandboxes/${revised.body.id}`, {
      ports: [{ port: 8080, visibility: "private" }],
    });
    expect(privatized.status).toBe(200);
    const bindingId = await bind(ADMISSION_POLICY, "admission");
    const publicPort = await eventually(
      () =>
        h.call<Problem>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
          name: "web",
          ports: [{ port: 8080, visibility: "public" }],
        }),
      (r) => r.status === 403,
    );
    expect(publicPort.status).toBe(403);
    expect(publicPort.body.ruleId).toBe("no-public-ports");
    const keyed = await h.call<Problem>("POST", `/v1/projects/${h.projectId}/sandboxes`, {
      name: "keyed",
      env: { AWS_SECRET_ACCESS_KEY: "shh-never-in-audit" },
    });
    expect(keyed.status).toBe(403);
    expect(keyed.body.ruleId).toBe("no-cloud-keys-in-env");
    // Updating an existing sandbox to expose a port is refused the same way.
    const update = await h.call<Problem>("PATCH", `/v1/projects/${h.projectId}/sandboxes/${box}`, {
      ports: [{ port: 9000, visibility: "public" }],
    });
    expect(update.status).toBe(403);
    expect(update.body.ruleId).toBe("no-public-ports");
    // Start and rollback are admitted again under today's policies.
    const start = await h.call<Problem>("POST", `/v1/projects/${h.projectId}/sandboxes/${quarantined.body.id}/start`);
    expect(start.status).toBe(403);
    expect(start.body.ruleId).toBe("quarantined-stay-stopped");
    const rollback = await h.call<Problem>(
      "POST",
      `/v1/projects/${h.projectId}/sandboxes/${revised.body.id}/rollback`,
      {
        revision: 1,
      },
    );
    expect(rollback.status).toBe(403);
    expect(rollback.body.ruleId).toBe("no-public-ports");
    // A private port is fine.
    const privatePort = await h.call("POST", `/v1/projects/${h.projectId}/sandboxes`, {
      name: "private",
      ports: [{ port: 8080, visibility: "private" }],
    });
    expect(privatePort.status).toBe(201);

    const records = await eventually(
      () => trail("policy.denied"),
      (items) => items.some((i) => i.details?.ruleId === "no-cloud-keys-in-env"),
    );
    expect(records.some((i) => i.details?.ruleId === "no-public-ports")).toBe(true);
    expect(JSON.stringify(records)).not.toContain("shh-never-in-audit");

    await unbind(bindingId);
    const admitted = await eventually(
      () =>
        h.call("POST", `/v1/projects/${h.projectId}/sandboxes`, {
          name: "web-later",
          ports: [{ port: 8080, visibility: "public" }],
        }),
      (r) => r.status === 201,
    );
    expect(admitted.status).toBe(201);
  }, 120_000);

  it("dryrun: a would-deny is audited and the command runs", async () => {
    const bindingId = await bind(
      `@id("watch-everything")\nforbid(principal, action == Action::"sandbox:exec", resource);`,
      "watch",
      "dryrun",
    );
    const r = await exec(["true"]);
    expect(r.status).toBe(200);
    const records = await eventually(
      () => trail("policy.dryrun_denied"),
      (items) => items.some((i) => i.details?.ruleId === "watch-everything"),
    );
    expect(records.find((i) => i.details?.ruleId === "watch-everything")?.details).toMatchObject({ mode: "dryrun" });
    await unbind(bindingId);
  }, 120_000);
});
