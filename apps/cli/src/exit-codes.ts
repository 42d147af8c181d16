import { ProblemError } from "@agentplane/sdk";

/** The exit codes scripts can rely on (`agentplane help exit-codes`). 2 never means a usage error. */
export const EXIT = {
  ok: 0,
  error: 1,
  cancelled: 2,
  notFoundOrDenied: 3,
  auth: 4,
} as const;

export const EXIT_CODES_HELP = `Exit codes of agentplane:

  0  success
  1  an error: a failed request, bad input, an unknown command or flag, a lost connection
  2  cancelled: a confirmation was declined (no, Ctrl-C or end of input at the question)
  3  not found or denied (the API answered 404 or 403)
  4  authentication needed: no token, or the token was refused (401)

\`agentplane sandboxes exec\`, \`sandboxes run\` and \`sessions run\` exit with the remote command's
exit code instead once the command ran; failures of the CLI itself before that (a request refused,
a sandbox not running) still exit 1, 3 or 4 as above. Ctrl-C anywhere else ends the process the way
the signal does (130 in a shell).
`;

/**
 * Ends the command with a remote command's exit code (exec, run): run() returns what is set here
 * once the action is done, after its output was written.
 */
export function exitWithRemoteCode(code: number): void {
  process.exitCode = code;
}

/** An error the CLI reports as one line on stderr with a chosen exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode: number = EXIT.error) {
    super(message);
    this.name = "CliError";
    this.exitCode = exitCode;
  }
}

export function exitCodeFor(error: unknown): number {
  if (error instanceof CliError) return error.exitCode;
  if (error instanceof ProblemError) {
    if (error.status === 401) return EXIT.auth;
    if (error.status === 403 || error.status === 404) return EXIT.notFoundOrDenied;
  }
  return EXIT.error;
}
