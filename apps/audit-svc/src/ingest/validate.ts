import {
  type AuditRecorded,
  AuditRecordedSchema,
  type UsageRecorded,
  UsageRecordedSchema,
} from "@agentplane/contracts";

/**
 * Reading an event off the bus. Nearly every event is well formed, so it is first read by plain
 * checks that accept only what the schema certainly accepts and build the same value the schema
 * would (known fields only, defaults filled in); anything else (a malformed event, or a form these
 * checks do not know) goes to the schema itself, which decides and explains. The schema stays the
 * one definition of what is valid: these checks are stricter, never looser.
 */
export type Read<T> = { success: true; data: T } | { success: false; issues: number };

export function readAuditEvent(data: unknown, id: string): Read<AuditRecorded> {
  const fast = quickAudit(data, id);
  if (fast) return { success: true, data: fast };
  const parsed = AuditRecordedSchema.safeParse({ ...(data as object), id });
  return parsed.success ? parsed : { success: false, issues: parsed.error.issues.length };
}

export function readUsageEvent(data: unknown, id: string): Read<UsageRecorded> {
  const fast = quickUsage(data, id);
  if (fast) return { success: true, data: fast };
  const parsed = UsageRecordedSchema.safeParse({ ...(data as object), id });
  return parsed.success ? parsed : { success: false, issues: parsed.error.issues.length };
}

const PRINCIPAL_TYPES: ReadonlySet<unknown> = new Set(AuditRecordedSchema.shape.principal.shape.type.options);
const OUTCOMES: ReadonlySet<unknown> = new Set(AuditRecordedSchema.shape.outcome.options);
const SOURCES: ReadonlySet<unknown> = new Set(["request", "domain"]);

type Fields = Record<string, unknown>;

const isPlain = (v: unknown): v is Fields => {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
};
const optString = (v: unknown) => v === undefined || typeof v === "string";
const count = (v: unknown) => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const optCount = (v: unknown) => v === undefined || count(v);

function stringRecord(v: unknown): boolean {
  if (!isPlain(v)) return false;
  for (const key in v) if (typeof v[key] !== "string") return false;
  return true;
}

function quickAudit(data: unknown, id: string): AuditRecorded | undefined {
  if (!isPlain(data)) return undefined;
  const p = data.principal;
  if (!isPlain(p) || !PRINCIPAL_TYPES.has(p.type) || !optString(p.id) || !optString(p.displayName)) return undefined;
  const { orgId, projectId, action, source, targetType, targetId, targets, outcome, status, details, time } = data;
  const { requestId, ip, userAgent, method, path } = data;
  if (typeof action !== "string" || typeof time !== "string" || !OUTCOMES.has(outcome)) return undefined;
  if (source !== undefined && !SOURCES.has(source)) return undefined;
  if (targets !== undefined && !stringRecord(targets)) return undefined;
  if (details !== undefined && !isPlain(details)) return undefined;
  if (status !== undefined && !(typeof status === "number" && Number.isSafeInteger(status))) return undefined;
  if (!(optString(orgId) && optString(projectId) && optString(targetType) && optString(targetId))) return undefined;
  if (!(optString(requestId) && optString(ip) && optString(userAgent) && optString(method) && optString(path)))
    return undefined;
  const principal: AuditRecorded["principal"] = { type: p.type as AuditRecorded["principal"]["type"] };
  if (p.id !== undefined) principal.id = p.id as string;
  if (p.displayName !== undefined) principal.displayName = p.displayName as string;
  const record: AuditRecorded = {
    id,
    principal,
    action,
    source: (source ?? "request") as AuditRecorded["source"],
    targets: (targets ?? {}) as Record<string, string>,
    outcome: outcome as AuditRecorded["outcome"],
    time,
  };
  if (orgId !== undefined) record.orgId = orgId as string;
  if (projectId !== undefined) record.projectId = projectId as string;
  if (targetType !== undefined) record.targetType = targetType as string;
  if (targetId !== undefined) record.targetId = targetId as string;
  if (status !== undefined) record.status = status as number;
  if (requestId !== undefined) record.requestId = requestId as string;
  if (ip !== undefined) record.ip = ip as string;
  if (userAgent !== undefined) record.userAgent = userAgent as string;
  if (method !== undefined) record.method = method as string;
  if (path !== undefined) record.path = path as string;
  if (details !== undefined) record.details = details as Record<string, unknown>;
  return record;
}

function quickUsage(data: unknown, id: string): UsageRecorded | undefined {
  if (!isPlain(data)) return undefined;
  const { orgId, projectId, principalType, principalId, provider, model, route, time } = data;
  const { inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens, costMicroUsd, requestId, reservationId } = data;
  if (!(typeof orgId === "string" && typeof principalType === "string" && typeof principalId === "string"))
    return undefined;
  if (!(typeof provider === "string" && typeof model === "string" && typeof route === "string")) return undefined;
  if (typeof time !== "string" || !count(inputTokens) || !count(outputTokens)) return undefined;
  if (!(optCount(cacheReadTokens) && optCount(cacheWriteTokens) && optCount(costMicroUsd))) return undefined;
  if (!(optString(projectId) && optString(requestId) && optString(reservationId))) return undefined;
  const record: UsageRecorded = {
    id,
    orgId,
    principalType,
    principalId,
    provider,
    model,
    route,
    inputTokens: inputTokens as number,
    outputTokens: outputTokens as number,
    cacheReadTokens: (cacheReadTokens ?? 0) as number,
    cacheWriteTokens: (cacheWriteTokens ?? 0) as number,
    time,
  };
  if (projectId !== undefined) record.projectId = projectId as string;
  if (costMicroUsd !== undefined) record.costMicroUsd = costMicroUsd as number;
  if (requestId !== undefined) record.requestId = requestId as string;
  if (reservationId !== undefined) record.reservationId = reservationId as string;
  return record;
}
