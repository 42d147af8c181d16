import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProjectRole } from "../api/hooks.ts";
import { Section } from "../components/section.tsx";
import { ToolCallForm } from "../components/tool-call-form.tsx";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";
import { ToolAudience, ToolTeamsDialog, useTeamNames } from "./tool-teams.tsx";

/** One connector: its status, tools with visibility, pending specs (diff, promote) and a tool call. */
export default function ConnectorPage() {
  const { serverId } = useParams() as { serverId: string };
  const queryClient = useQueryClient();
  const connector = useQuery({
    queryKey: ["connector", serverId],
    queryFn: () => call("getConnector", { path: { serverId } }),
  });
  const role = useProjectRole(connector.data?.projectId);
  const manage = allows("connections:manage", role);
  const callTools = allows("connectors:call", role);
  const status = useQuery({
    queryKey: ["connector", serverId, "status"],
    queryFn: () => call("getConnectorStatus", { path: { serverId } }),
  });
  const tools = useQuery({
    queryKey: ["connector", serverId, "tools"],
    queryFn: () => call("listConnectorTools", { path: { serverId } }),
  });
  const [calling, setCalling] = useState<string | undefined>();
  const [limiting, setLimiting] = useState<string | undefined>();
  const { nameOf } = useTeamNames(connector.data?.orgId);
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["connector", serverId] });
  const discover = useMutation({
    mutationFn: () => call("discoverConnector", { path: { connectorId: serverId } }),
    onSuccess: refresh,
  });
  const visibility = useMutation({
    // A tool hidden and shown again keeps the teams it was limited to.
    mutationFn: (v: { name: string; visibility: "visible" | "hidden"; teams?: string[] | undefined }) =>
      call("setConnectorEntryVisibility", {
        path: { connectorId: serverId, entryName: v.name },
        body: { visibility: v.visibility, ...(v.teams?.length ? { teams: v.teams } : {}) },
      }),
    onSuccess: refresh,
  });
  if (connector.isPending) return <Loading what="the connector" />;
  if (connector.error) return <ErrorNote error={connector.error} retry={() => void connector.refetch()} />;
  const c = connector.data;
  const tool = tools.data?.items.find((t) => t.name === calling);
  const limited = tools.data?.items.find((t) => t.name === limiting);
  return (
    <>
      <p className="mb-2 text-sm">
        <Link
          to={`/orgs/${c.orgId}/connections?project=${c.projectId}`}
          className="text-indigo-700 underline dark:text-indigo-300"
        >
          All connections
        </Link>
      </p>
      <PageTitle
        actions={
          <Guarded allowance={manage}>
            {(disabled) => (
              <Button disabled={disabled || discover.isPending} onClick={() => discover.mutate()}>
                {discover.isPending ? "Fetching…" : "Fetch the source again"}
              </Button>
            )}
          </Guarded>
        }
      >
        {c.name}
      </PageTitle>
      <dl className="mb-4 grid grid-cols-[10rem_1fr] gap-1 text-sm">
        <dt className="font-medium">Status</dt>
        <dd data-testid="connector-status">{status.data?.status ?? c.status}</dd>
        <dt className="font-medium">Version</dt>
        <dd>{status.data?.version ?? c.version}</dd>
        <dt className="font-medium">Last discovery</dt>
        <dd>{c.lastDiscoveredAt ? new Date(c.lastDiscoveredAt).toLocaleString() : "never"}</dd>
        <dt className="font-medium">Source</dt>
        <dd className="font-mono">{c.url ?? c.specUrl ?? "inline description"}</dd>
        {(status.data?.lastError ?? c.lastError) ? (
          <>
            <dt className="font-medium">Last error</dt>
            <dd>{status.data?.lastError ?? c.lastError}</dd>
          </>
        ) : null}
      </dl>
      <ErrorNote error={discover.error ?? visibility.error ?? status.error} />
      {discover.data ? (
        <p role="status" className="mb-3 text-sm">
          {discover.data.changed
            ? "The source changed: a pending spec waits for promotion."
            : "The source is unchanged."}
        </p>
      ) : null}
      <PendingSpecs connectorId={serverId} manage={manage} onPromoted={refresh} />
      <Section title="Tools">
        {tools.isPending ? <Loading what="tools" /> : null}
        <ErrorNote error={tools.error} retry={() => void tools.refetch()} />
        {tools.data?.items.length ? (
          <Table label="Tools" headers={["Name", "Description", "Visibility", ""]}>
            {tools.data.items.map((t) => (
              <tr key={t.name}>
                <Td mono>{t.name}</Td>
                <Td>{t.description}</Td>
                <Td>
                  <Guarded allowance={manage}>
                    {(disabled) => (
                      <span className="flex items-center gap-2">
                        <label className="flex items-center gap-1">
                          <input
                            type="checkbox"
                            aria-label={`${t.name} visible`}
                            checked={t.visibility !== "hidden"}
                            disabled={disabled || visibility.isPending}
                            onChange={(e) =>
                              visibility.mutate({
                                name: t.name,
                                visibility: e.target.checked ? "visible" : "hidden",
                                teams: t.teams,
                              })
                            }
                          />
                          <ToolAudience tool={t} nameOf={nameOf} />
                        </label>
                        <Button
                          aria-label={`Teams of ${t.name}`}
                          disabled={disabled || t.visibility === "hidden"}
                          onClick={() => setLimiting(t.name)}
                        >
                          Teams
                        </Button>
                      </span>
                    )}
                  </Guarded>
                </Td>
                <Td>
                  <Guarded allowance={callTools}>
                    {(disabled) => (
                      <Button aria-label={`Call ${t.name}`} disabled={disabled} onClick={() => setCalling(t.name)}>
                        Call
                      </Button>
                    )}
                  </Guarded>
                </Td>
              </tr>
            ))}
          </Table>
        ) : tools.isSuccess ? (
          <p className="text-sm">No tools.</p>
        ) : null}
      </Section>
      {limited ? (
        <ToolTeamsDialog
          key={limited.name}
          connectorId={serverId}
          orgId={c.orgId}
          tool={limited}
          onClose={() => setLimiting(undefined)}
          onSaved={refresh}
        />
      ) : null}
      {tool ? (
        <ToolCallForm key={tool.name} serverId={serverId} tool={tool} onClose={() => setCalling(undefined)} />
      ) : null}
    </>
  );
}

function PendingSpecs({
  connectorId,
  manage,
  onPromoted,
}: {
  connectorId: string;
  manage: ReturnType<typeof allows>;
  onPromoted: () => void;
}) {
  const [open, setOpen] = useState<string | undefined>();
  const specs = useQuery({
    queryKey: ["connector", connectorId, "pending"],
    queryFn: () => call("listPendingSpecs", { path: { connectorId } }),
  });
  const diff = useQuery({
    queryKey: ["connector", connectorId, "pending", open, "diff"],
    queryFn: () => call("getPendingSpecDiff", { path: { connectorId, specId: open! } }),
    enabled: !!open,
  });
  const promote = useMutation({
    mutationFn: (specId: string) => call("promotePendingSpec", { path: { connectorId, specId } }),
    onSuccess: () => {
      setOpen(undefined);
      onPromoted();
    },
  });
  const pending = (specs.data?.items ?? []).filter((s) => s.status === "pending");
  if (!pending.length && !specs.error) return null;
  return (
    <Section title="Pending specs">
      <ErrorNote error={specs.error ?? promote.error ?? diff.error} />
      <Table label="Pending specs" headers={["Discovered", "Against version", "Tools", "Skipped", ""]}>
        {pending.map((s) => (
          <tr key={s.id}>
            <Td>{new Date(s.createdAt).toLocaleString()}</Td>
            <Td>{s.baseVersion}</Td>
            <Td>{s.toolCount}</Td>
            <Td>{s.warnings.length}</Td>
            <Td>
              <span className="flex gap-2">
                <Button aria-expanded={open === s.id} onClick={() => setOpen(open === s.id ? undefined : s.id)}>
                  {open === s.id ? "Hide changes" : "Show changes"}
                </Button>
                <Guarded allowance={manage}>
                  {(disabled) => (
                    <Button
                      variant="primary"
                      disabled={disabled || promote.isPending}
                      onClick={() => promote.mutate(s.id)}
                    >
                      {promote.isPending ? "Promoting…" : "Promote"}
                    </Button>
                  )}
                </Guarded>
              </span>
            </Td>
          </tr>
        ))}
      </Table>
      {open && diff.isPending ? <Loading what="the changes" /> : null}
      {open && diff.data ? (
        <div
          data-testid="spec-diff"
          className="mt-2 rounded-md border border-slate-200 p-3 font-mono text-xs dark:border-slate-700"
        >
          {diff.data.added.map((n) => (
            <div key={`+${n}`} className="text-green-800 dark:text-green-300">
              + {n}
            </div>
          ))}
          {diff.data.removed.map((n) => (
            <div key={`-${n}`} className="text-red-800 dark:text-red-300">
              − {n}
            </div>
          ))}
          {diff.data.changed.map((ch) => (
            <div key={`~${ch.name}`}>
              ~ {ch.name}
              {ch.descriptionChanged ? " (description)" : ""}
              {ch.schemaChanges.map((sc) => (
                <div key={sc.pointer} className="pl-4">
                  {sc.change} {sc.pointer}
                </div>
              ))}
            </div>
          ))}
          {!diff.data.added.length && !diff.data.removed.length && !diff.data.changed.length ? "No tool changes" : null}
        </div>
      ) : null}
    </Section>
  );
}
