import {
  DEFAULT_OBJECT_LIMITS,
  OBJECT_LIMIT_KIND_NAMES,
  OBJECT_LIMIT_KINDS,
  OBJECT_LIMITS_SETTING,
  type ObjectLimitKind,
  type ObjectLimits,
} from "@agentplane/contracts";
import { lockForTransaction } from "@agentplane/db";
import { ProblemError } from "@agentplane/problem-details";
import { z } from "zod";

/** The largest limit the setting accepts: beyond it a limit protects nothing. */
export const MAX_OBJECT_LIMIT = 1_000_000;

const isKind = (name: string): name is ObjectLimitKind => Object.hasOwn(OBJECT_LIMIT_KINDS, name);

/**
 * `OBJECT_LIMITS`: `<kind>=<n>` pairs, comma-separated (`connectors=2000,api-tokens=5000`); kinds
 * not named keep their default. An unknown kind, a repeated one or a count that is not a whole
 * number from 1 to 1,000,000 stops the start naming the variable.
 */
export const envObjectLimits = z
  .string()
  .optional()
  .transform((value, ctx): ObjectLimits => {
    const limits: Record<string, number> = { ...DEFAULT_OBJECT_LIMITS };
    const seen = new Set<string>();
    for (const entry of (value ?? "").split(",")) {
      const pair = entry.trim();
      if (!pair) continue;
      const match = /^([a-z-]+)\s*=\s*(\d+)$/.exec(pair);
      const kind = match?.[1] ?? pair.split("=")[0]?.trim() ?? pair;
      const count = match ? Number(match[2]) : Number.NaN;
      if (!isKind(kind)) {
        ctx.addIssue({
          code: "custom",
          message: `unknown kind "${kind}" (known: ${OBJECT_LIMIT_KIND_NAMES.join(", ")})`,
        });
      } else if (seen.has(kind)) {
        ctx.addIssue({ code: "custom", message: `${kind} is given twice` });
      } else if (!Number.isSafeInteger(count) || count < 1 || count > MAX_OBJECT_LIMIT) {
        ctx.addIssue({
          code: "custom",
          message: `"${pair}" must be <kind>=<n> with n a whole number from 1 to ${MAX_OBJECT_LIMIT}`,
        });
      } else {
        seen.add(kind);
        limits[kind] = count;
      }
    }
    return limits as ObjectLimits;
  });

/** The settings schema member every service that creates tenant objects spreads into its own. */
export const ObjectLimitsSettingSchema = z.object({ [OBJECT_LIMITS_SETTING]: envObjectLimits });

export interface ObjectLimitCheck {
  kind: ObjectLimitKind;
  /** What holds the objects: an organization, a project or a user, and its id. */
  holder: "organization" | "project" | "user";
  holderId: string;
  /** How many the holder keeps now, counted inside the same transaction. */
  count: () => Promise<number>;
}

/**
 * Refuses a create that would take a holder past its limit of a kind. Call it in the create's
 * transaction, before the insert: it holds a lock on (kind, holder) until the transaction ends, so
 * concurrent creates of the same holder count one after the other and cannot overshoot; deletes
 * need no lock (they only free slots).
 */
export async function enforceObjectLimit(
  trx: Parameters<typeof lockForTransaction>[0],
  limits: ObjectLimits,
  check: ObjectLimitCheck,
): Promise<void> {
  await lockForTransaction(trx, objectLimitLock(check.kind, check.holderId));
  const held = await check.count();
  const limit = limits[check.kind];
  if (held >= limit) throw limitExceeded(check.kind, limit, check.holder);
}

/** The advisory lock creates of `kind` in `holderId` count under (see `lockForTransaction`). */
export function objectLimitLock(kind: ObjectLimitKind, holderId: string): string {
  return `object-limit:${kind}:${holderId}`;
}

/** The 409 `limit-exceeded` problem: which kind, its limit, and the setting that raises it. */
export function limitExceeded(
  kind: ObjectLimitKind,
  limit: number,
  holder: "organization" | "project" | "user",
): ProblemError {
  const spec = OBJECT_LIMIT_KINDS[kind];
  const counted = "counted" in spec ? ` ${spec.counted}` : "";
  const free = "free" in spec ? spec.free : "Delete one";
  return new ProblemError("limit-exceeded", {
    detail:
      `This ${holder} already holds ${limit} ${spec.many}${counted}, its limit. ${free}, or have the operator ` +
      `raise the limit with the setting ${OBJECT_LIMITS_SETTING} (${OBJECT_LIMITS_SETTING}=${kind}=<n>).`,
    extensions: { kind, limit, setting: OBJECT_LIMITS_SETTING },
  });
}

/** The limits a service uses when its configuration names none (tests, embedding callers). */
export function objectLimitsOr(limits: ObjectLimits | undefined): ObjectLimits {
  return limits ?? DEFAULT_OBJECT_LIMITS;
}
