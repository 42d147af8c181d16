// A value typed as a flag is in the command line: other users of the machine read it in the
// process list (`ps`, /proc/<pid>/cmdline) while the command runs, and the shell keeps it in its
// history. The body fields below hold secrets; given that way, the CLI says so and names the way
// that keeps them out (a JSON body on stdin), as `auth login --with-token` does for tokens.
import type { Io } from "./context.ts";

/** The secret fields of the credential kinds (CREDENTIAL_FIELDS in the contracts; a test holds them equal). */
export const CREDENTIAL_SECRET_FIELDS = [
  "token",
  "secretAccessKey",
  "sessionToken",
  "key",
  "externalId",
  "value",
  "password",
] as const;

/** Body fields that hold a secret, by command. */
export const SECRET_FIELDS: Record<string, readonly string[]> = {
  "credentials create": CREDENTIAL_SECRET_FIELDS,
  "credentials update": CREDENTIAL_SECRET_FIELDS,
  // Header values of a connector are its API keys more often than not.
  "connectors create": ["headers"],
  "connectors update": ["headers"],
  "invitations preview": ["token"],
  "invitations redeem": ["token"],
  "auth device poll": ["deviceCode"],
};

/**
 * Warns on stderr when secret fields of `command` were given on the command line. `typed` says
 * whether a field was; `flagOf` names the flag it was given with.
 */
export function warnSecretArguments(
  io: Io,
  command: string,
  typed: (field: string) => boolean,
  flagOf: (field: string) => string,
): void {
  const flags = (SECRET_FIELDS[command] ?? []).filter(typed).map(flagOf);
  if (flags.length === 0) return;
  io.stderr.write(
    `warning: ${flags.join(", ")} put a secret in the command line, where other users of this machine can read it (the process list) and the shell keeps it (its history); pass it in a JSON body with --input - (stdin) or --input <file> instead\n`,
  );
}
