import { randomBytes } from "node:crypto";
import { type CreateSandboxRequest, newId, SandboxSpecSchema } from "@agentplane/contracts";
import { withDomainEvents } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import type { Caller } from "@agentplane/service-kit";
import type { Kysely } from "kysely";
import type { z } from "zod";
import type { SandboxDB } from "../db/schema.ts";
import { stage } from "../stages.ts";
import { recordSandboxEvent, type SandboxDeps } from "./context.ts";
import { takeEarlyStart } from "./early-starts.ts";
import { enforceCreateLimits } from "./limits.ts";
import { jsonb, type SandboxRow, specColumns } from "./mapping.ts";
import { enforceAdmission } from "./policy.ts";
import { launchSandbox } from "./sandboxes.ts";
import { type NewToken, newPlatformToken, writePlatformToken } from "./tokens.ts";

// Creating a sandbox: admitted by policy, counted against its limits, written with its first
// revision and audit record in one transaction, and started at once when asked (the driver
// starting while the rows are written).

type CreateInput = z.infer<typeof CreateSandboxRequest> & { projectId: string };

function slugFrom(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+|-+$/g, "")
    .slice(0, 40);
  return `${base || "sandbox"}-${randomBytes(3).toString("hex")}`;
}

function isLimitExceeded(err: unknown, kind: string): boolean {
  return err instanceof ProblemError && err.slug === "limit-exceeded" && err.extensions?.kind === kind;
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === "23505" || /duplicate key|unique constraint/i.test(e?.message ?? "");
}

export async function createSandbox(deps: SandboxDeps, caller: Caller, input: CreateInput): Promise<SandboxRow> {
  const { projectId } = input;
  const spec = SandboxSpecSchema.parse({
    image: input.image,
    command: input.command,
    env: input.env,
    resources: input.resources,
    ports: input.ports,
    idleTimeoutSeconds: input.idleTimeoutSeconds,
  });
  deps.driver.validateImage(spec.image);
  const id = newId("sandbox");
  const admitted = { id, project_id: projectId, org_id: caller.orgId ?? null, labels: input.labels };
  const now = new Date();
  const pending: SandboxRow = {
    id,
    project_id: projectId,
    org_id: caller.orgId ?? null,
    name: input.name,
    slug: input.slug ?? slugFrom(input.name),
    image: spec.image,
    command: spec.command,
    env: spec.env,
    resources: spec.resources as SandboxRow["resources"],
    ports: spec.ports,
    idle_timeout_seconds: spec.idleTimeoutSeconds,
    labels: input.labels,
    state: "pending",
    current_revision: 1,
    last_error: null,
    platform_token_id: null,
    created_at: now,
    updated_at: now,
    started_at: null,
    last_activity_at: null,
    restore_revision: null,
  };
  // The limits are counted under their locks in the transaction of the insert (see
  // `enforceCreateLimits`). A started create is counted before the driver runs anything of the
  // sandbox's (`counted`), and the rows are written while it starts: statements beside the start
  // delay it more than the count before it does (on the embedded database they run on this thread).
  const writeRow = async (trx: Kysely<SandboxDB>, row: SandboxRow, counted?: PromiseWithResolvers<void>) => {
    try {
      await enforceCreateLimits(deps, trx, row);
    } catch (err) {
      counted?.reject(err);
      throw err;
    }
    counted?.resolve();
    const inserted = await trx
      .insertInto("sandboxes")
      .values({ ...row, ...specColumns(spec), labels: jsonb(input.labels) } as never)
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .insertInto("revisions")
      .values({
        sandbox_id: id,
        revision: 1,
        spec: jsonb(spec),
        author_type: caller.principal.type,
        author_id: caller.principal.id,
        author_name: caller.principal.displayName ?? null,
        reason: "created",
        created_at: now,
      } as never)
      .execute();
    if (platform && row.state === "starting") await writePlatformToken(trx, platform, null);
    await recordSandboxEvent(deps, trx, caller, {
      action: "sandbox.created",
      projectId,
      targetType: "sandbox",
      targetId: id,
    });
    return inserted;
  };
  const slugTaken = (err: unknown) => {
    if (isUniqueViolation(err)) throw new ProblemError("conflict", { detail: `The slug ${input.slug} is taken` });
    throw err;
  };
  const writePending = () => withDomainEvents(deps, (trx) => writeRow(trx, pending)).catch(slugTaken);
  const admitCreate = () => enforceAdmission(deps, caller, "sandbox:create", admitted, spec);
  let platform: NewToken | undefined;
  if (!input.start) {
    await admitCreate();
    stage("create: create admitted");
    return writePending();
  }
  // A start asked with the create is decided after the create. Refused, the sandbox is created
  // all the same (pending) and the refusal answered, as a create followed by a start would be.
  try {
    deps.driver.checkAvailable();
  } catch (err) {
    await admitCreate();
    await writePending();
    throw err;
  }
  // The token is made before the start is decided (nothing is written of it until it is).
  platform = newPlatformToken(admitted);
  const fresh: SandboxRow = { ...pending, state: "starting", platform_token_id: platform.row.id };
  let refused: "create" | "start" | undefined;
  const counted = Promise.withResolvers<void>();
  // The row is written `starting` with its platform token once both are admitted. With a start,
  // the boot's transaction follows within milliseconds and the relay publishes both records after
  // it: one relay round for the two, not one in the middle of the start.
  const written = (async () => {
    await admitCreate().catch((err: unknown) => {
      refused = "create";
      throw err;
    });
    stage("create: create admitted");
    await enforceAdmission(deps, caller, "sandbox:start", admitted, spec).catch((err: unknown) => {
      refused = "start";
      throw err;
    });
    stage("create: start admitted");
    return deps.db
      .transaction()
      .execute((trx) => writeRow(trx, fresh, counted))
      .catch(slugTaken);
  })();
  // Settled by the count, or by whatever fails before it (a refusal, a transaction not begun).
  written.catch((err: unknown) => counted.reject(err));
  counted.promise.then(
    () => stage("create: limits counted"),
    () => {},
  );
  // The driver builds the sandbox while the start is decided (bwrap's namespaces and mounts take
  // longer than the decisions and the count together); it runs nothing of the sandbox's until the
  // start is counted, and undoes the start should it not be. Past the bound of such starts, the
  // driver begins once the start is counted.
  const launch = () => launchSandbox(deps, caller, fresh, { platform, written, admitted: counted.promise });
  const early = takeEarlyStart(deps);
  const booted = early ? launch() : undefined;
  try {
    await counted.promise;
    early?.();
  } catch (err) {
    // The undone start is awaited first: nothing of it may be left when the refusal is answered.
    await booted?.catch(() => {});
    early?.();
    // A refused create leaves nothing; a refused start, or an organization at its limit of running
    // sandboxes, leaves the sandbox created pending.
    if (refused === "start" || isLimitExceeded(err, "running-sandboxes")) await writePending();
    throw err;
  }
  return booted ?? launch();
}
