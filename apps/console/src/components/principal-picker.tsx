import type { components } from "@agentplane/sdk";
import { useQuery } from "@tanstack/react-query";
import { call } from "../api/client.ts";
import { Field, INPUT } from "./ui.tsx";

export type DecisionPrincipal = components["schemas"]["PolicyDecisionPrincipal"];
type Kind = DecisionPrincipal["type"] | "";

const KINDS: { kind: Kind; label: string }[] = [
  { kind: "", label: "You" },
  { kind: "user", label: "A member" },
  { kind: "api_token", label: "An API token" },
  { kind: "sandbox", label: "A sandbox" },
];

/** The first page of each list is offered (200 at most); an id can still be typed past it. */
const CHOICES = 200;

function useCandidates(kind: Kind, orgId: string, projectId: string | undefined) {
  return useQuery({
    queryKey: ["decision-principals", kind, orgId, projectId],
    enabled: kind !== "" && (kind !== "sandbox" || !!projectId),
    queryFn: async (): Promise<{ id: string; label: string }[]> => {
      if (kind === "user") {
        const page = await call("listMembers", { path: { orgId }, query: { limit: CHOICES } });
        return page.items.map((m) => ({ id: m.userId, label: m.displayName ?? m.email ?? m.userId }));
      }
      if (kind === "api_token") {
        const page = await call("listApiTokens", { path: { orgId }, query: { limit: CHOICES } });
        return page.items
          .filter((t) => !t.projectId || t.projectId === projectId)
          .map((t) => ({ id: t.id, label: `${t.name} (${t.role})` }));
      }
      const page = await call("listSandboxes", { path: { projectId: projectId! }, query: { limit: CHOICES } });
      return page.items.map((s) => ({ id: s.id, label: s.name }));
    },
  });
}

/**
 * Whom "would this be allowed?" asks for: yourself, or (for a project admin) a member, an API
 * token or a sandbox of the project, chosen from their lists.
 */
export function PrincipalPicker({
  orgId,
  projectId,
  value,
  onChange,
  disabled,
  error,
}: {
  orgId: string;
  projectId: string | undefined;
  value: DecisionPrincipal | undefined;
  onChange: (principal: DecisionPrincipal | undefined) => void;
  disabled: boolean;
  error?: string | undefined;
}) {
  const kind: Kind = value?.type ?? "";
  const candidates = useCandidates(kind, orgId, projectId);
  const label = KINDS.find((k) => k.kind === kind)?.label.replace(/^An? /, "") ?? "";
  return (
    <>
      <Field label="Ask for">
        {(p) => (
          <select
            {...p}
            className={INPUT}
            value={kind}
            disabled={disabled}
            onChange={(e) => {
              const next = e.target.value as Kind;
              onChange(next ? { type: next, id: "" } : undefined);
            }}
          >
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        )}
      </Field>
      {value ? (
        <Field label={`Which ${label}`} error={error}>
          {(p) => (
            <select
              {...p}
              className={INPUT}
              value={value.id}
              onChange={(e) => onChange({ type: value.type, id: e.target.value })}
            >
              <option value="">{candidates.isPending ? "Loading…" : `Choose a ${label}`}</option>
              {candidates.data?.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.label} · {c.id}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
    </>
  );
}
