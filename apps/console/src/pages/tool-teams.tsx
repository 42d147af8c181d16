import type { components } from "@agentplane/sdk";
import { useMutation, useQuery } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { call } from "../api/client.ts";
import { Dialog } from "../components/dialog.tsx";
import { Button, ErrorNote } from "../components/ui.tsx";
import { fieldErrorsOf } from "../lib/problem.ts";

type ToolEntry = components["schemas"]["ConnectorToolEntry"];

/** The organization's teams (the first 200), by id, for showing a tool's teams by name. */
export function useTeamNames(orgId: string | undefined) {
  const teams = useQuery({
    queryKey: ["teams", orgId, "choices"],
    queryFn: () => call("listTeams", { path: { orgId: orgId! }, query: { limit: 200 } }),
    enabled: !!orgId,
  });
  const names = new Map((teams.data?.items ?? []).map((t) => [t.id, t.name]));
  return { teams, nameOf: (id: string) => names.get(id) ?? id };
}

/** Who sees a tool: the teams it is limited to, or everyone in the project when none. */
export function ToolAudience({ tool, nameOf }: { tool: ToolEntry; nameOf: (id: string) => string }) {
  if (tool.visibility === "hidden") return <span>hidden</span>;
  if (!tool.teams?.length) return <span>visible</span>;
  return <span data-testid={`tool-teams-${tool.name}`}>visible to {tool.teams.map(nameOf).join(", ")}</span>;
}

/**
 * Limits a tool to some teams of the organization (only their members see and call it), or to
 * nobody in particular (everyone in the project). The tool stays visible.
 */
export function ToolTeamsDialog({
  connectorId,
  orgId,
  tool,
  onClose,
  onSaved,
}: {
  connectorId: string;
  orgId: string;
  tool: ToolEntry;
  onClose: () => void;
  onSaved: () => void;
}) {
  const { teams } = useTeamNames(orgId);
  const [chosen, setChosen] = useState<string[]>(tool.teams ?? []);
  const save = useMutation({
    mutationFn: () =>
      call("setConnectorEntryVisibility", {
        path: { connectorId, entryName: tool.name },
        body: { visibility: "visible", ...(chosen.length ? { teams: chosen } : {}) },
      }),
    onSuccess: () => {
      onSaved();
      onClose();
    },
  });
  const fieldError = fieldErrorsOf(save.error);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    save.mutate();
  };
  const toggle = (id: string, on: boolean) => setChosen((c) => (on ? [...c, id] : c.filter((x) => x !== id)));
  return (
    <Dialog
      open
      onOpenChange={(o) => !o && onClose()}
      title={`Teams that see ${tool.name}`}
      description="Only members of the chosen teams see and call the tool; with none chosen, everyone in the project does."
    >
      <form onSubmit={submit} noValidate>
        <fieldset className="mb-3" aria-describedby={fieldError("teams") ? "tool-teams-error" : undefined}>
          <legend className="mb-1 text-sm font-medium">Teams</legend>
          {teams.isPending ? <p className="text-sm">Loading teams…</p> : null}
          <ErrorNote error={teams.error} retry={() => void teams.refetch()} />
          {teams.data?.items.length === 0 ? <p className="text-sm">The organization has no teams yet.</p> : null}
          {teams.data?.items.map((t) => (
            <label key={t.id} className="flex items-center gap-2 text-sm">
              <input type="checkbox" checked={chosen.includes(t.id)} onChange={(e) => toggle(t.id, e.target.checked)} />
              {t.name}
            </label>
          ))}
          {fieldError("teams") ? (
            <p id="tool-teams-error" className="text-xs text-red-700 dark:text-red-300">
              {fieldError("teams")}
            </p>
          ) : null}
        </fieldset>
        <ErrorNote error={fieldError("teams") ? undefined : save.error} />
        <Button type="submit" variant="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : chosen.length ? `Limit to ${chosen.length} team(s)` : "Show to everyone"}
        </Button>
      </form>
    </Dialog>
  );
}
