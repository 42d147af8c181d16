import { useQuery } from "@tanstack/react-query";
import { call } from "../api/client.ts";
import { ApiError } from "../lib/problem.ts";

/** Who did something, as the API records it: a principal's type (when recorded), id and name (when kept). */
export interface PrincipalRef {
  type?: string | undefined;
  id: string;
  /** The display name the principal carried when it acted; looked up only when absent. */
  name?: string | undefined;
}

type Kind = "user" | "api_token" | "sandbox" | "cluster" | "service" | "unknown";

const PREFIXES: [string, Kind][] = [
  ["usr_", "user"],
  ["tok_", "api_token"],
  ["sbx_", "sandbox"],
];

function kindOf(principal: PrincipalRef): Kind {
  const { type, id } = principal;
  if (type === "user" || type === "api_token" || type === "sandbox" || type === "cluster" || type === "service") {
    return type;
  }
  return PREFIXES.find(([prefix]) => id.startsWith(prefix))?.[1] ?? "unknown";
}

/** What a person is shown for a principal whose name the caller may not read (or that is gone). */
const UNNAMED: Record<Kind, string> = {
  user: "A former member",
  api_token: "An API token",
  sandbox: "A sandbox",
  cluster: "A cluster",
  service: "Agentplane",
  unknown: "Unknown",
};

/** A 4xx (not visible to the caller, or gone) means no name, kept like one; anything else is retried. */
async function orNull<T>(load: Promise<T>): Promise<T | null> {
  try {
    return await load;
  } catch (err) {
    if (err instanceof ApiError && err.status < 500) return null;
    throw err;
  }
}

/** A recorded name, said the way a looked-up one is. */
function recordedName(kind: Kind, name: string): string {
  if (kind === "api_token") return `${name} (token)`;
  if (kind === "sandbox") return `${name} (sandbox)`;
  return name;
}

async function nameOf(kind: Kind, id: string, orgId?: string, projectId?: string): Promise<string | null> {
  if (kind === "user" && orgId) {
    const member = await orNull(call("getMember", { path: { orgId, userId: id } }));
    return member ? (member.displayName ?? member.email ?? "A member") : null;
  }
  if (kind === "api_token") {
    const token = await orNull(call("getApiToken", { path: { tokenId: id } }));
    return token ? `${token.name} (token)` : null;
  }
  if (kind === "sandbox" && projectId) {
    const sandbox = await orNull(call("getSandbox", { path: { projectId, sandboxId: id } }));
    return sandbox ? `${sandbox.name} (sandbox)` : null;
  }
  return null;
}

/**
 * A principal as a person recognises it: a member's name or email, a token's name ("ci (token)"),
 * a sandbox's name — the name recorded with the principal when there is one, else looked up.
 * One the signed-in role may not read (another member's token, for a viewer)
 * or that no longer exists is said in words, with its id beside it to trace it in the audit trail.
 */
export function PrincipalName({
  principal,
  orgId,
  projectId,
}: {
  principal: PrincipalRef;
  orgId?: string | undefined;
  projectId?: string | undefined;
}) {
  const kind = kindOf(principal);
  const recorded = principal.name ? recordedName(kind, principal.name) : null;
  const lookedUp =
    !recorded && ((kind === "user" && !!orgId) || kind === "api_token" || (kind === "sandbox" && !!projectId));
  const name = useQuery({
    queryKey: ["principal-name", kind, principal.id, orgId, projectId],
    queryFn: () => nameOf(kind, principal.id, orgId, projectId),
    enabled: lookedUp,
    staleTime: 5 * 60_000,
  });
  if (recorded) return <span>{recorded}</span>;
  // A member is named within the organization, which the page may still be loading.
  const waiting = (lookedUp && name.isPending) || (kind === "user" && !orgId);
  if (waiting) return <span className="text-slate-600 dark:text-slate-300">…</span>;
  if (name.data) return <span>{name.data}</span>;
  return (
    <span>
      {kind === "service" ? `Agentplane (${principal.id})` : UNNAMED[kind]}
      {kind === "service" ? null : (
        <>
          {" "}
          <span className="font-mono text-xs">{principal.id}</span>
        </>
      )}
    </span>
  );
}
