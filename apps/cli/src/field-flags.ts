import type { ProblemError } from "@agentplane/sdk";

/**
 * The API's field pointers (`/body/name`, `/body/resources/memoryMiB`, `/query/limit`) as the
 * flags that set them (`--name`, `--resources memoryMiB`, `--limit`), which is what was typed.
 */
export function nameFlags(error: ProblemError, flagFor: (where: "body" | "query", name: string) => string | undefined) {
  for (const e of error.errors) {
    const m = /^\/(body|query)\/([^/]+)(\/.*)?$/.exec(e.pointer);
    const flag = m ? flagFor(m[1] as "body" | "query", m[2]!) : undefined;
    if (flag) e.pointer = m![3] ? `${flag} ${m![3].slice(1)}` : flag;
  }
}
