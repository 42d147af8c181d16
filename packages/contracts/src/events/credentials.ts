import { z } from "@hono/zod-openapi";

export const CREDENTIALS_REVOKED = "gateway.credentials-revoked";

/**
 * A notice (every gateway replica hears it, none keeps it) that a replica forgot resolved
 * credentials on a revocation that went through it, for the others to forget them at once: those
 * naming `id` (a token, session, user, organization, project or sandbox id), or the session whose
 * secret hashes to `sessionKey` (a sign-out; never the secret itself). `from` is the replica.
 */
export const CredentialsRevokedSchema = z
  .object({
    from: z.string().min(1).max(100),
    id: z.string().min(1).max(200).optional(),
    sessionKey: z.string().min(1).max(100).optional(),
  })
  .refine((notice) => notice.id !== undefined || notice.sessionKey !== undefined, "names nothing to forget");
export type CredentialsRevoked = z.infer<typeof CredentialsRevokedSchema>;
