import type { Allowance, OrgRole } from "./permissions.ts";

export const LAST_OWNER: Allowance = {
  allowed: false,
  reason: "The last owner cannot be removed or demoted: make someone else owner first",
};

/**
 * What the signed-in person may do to one member: the role matrix first (`manage`), then the
 * last-owner guard the API enforces, then that only an owner changes an owner.
 */
export function memberAllowance(
  manage: Allowance,
  member: { role: OrgRole },
  owners: number,
  signedInRole: OrgRole | undefined,
): Allowance {
  if (!manage.allowed) return manage;
  if (member.role === "owner" && owners === 1) return LAST_OWNER;
  if (member.role === "owner" && signedInRole !== "owner") {
    return { allowed: false, reason: "Only an owner can change an owner" };
  }
  return { allowed: true };
}
