import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProject, useProjectRole } from "../api/hooks.ts";
import type { Sandbox } from "../api/types.ts";
import { ExposedPorts } from "../components/exposed-ports.tsx";
import { FormDialog } from "../components/form.tsx";
import { PrincipalName } from "../components/principal-name.tsx";
import { describeLimits, UnenforcedLimitsWarning } from "../components/sandbox-limits.tsx";
import { Section } from "../components/section.tsx";
import { Button, ErrorNote, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";

const MOVING = ["pending", "starting", "stopping", "deleting"];

/**
 * One sandbox: its limits (and a warning when some do not hold where it runs), its exposed ports,
 * its revisions (with rollback), the policy that reaches it and its open shell sessions.
 */
export default function SandboxDetailPage() {
  const { projectId, sandboxId } = useParams() as { projectId: string; sandboxId: string };
  const role = useProjectRole(projectId);
  const path = { projectId, sandboxId };
  const sandbox = useQuery({
    queryKey: ["sandbox", projectId, sandboxId],
    queryFn: () => call("getSandbox", { path }),
    refetchInterval: (q) => (q.state.data && MOVING.includes(q.state.data.state) ? 1000 : false),
  });
  const s = sandbox.data;
  return (
    <>
      <PageTitle>{s ? `Sandbox ${s.name}` : "Sandbox"}</PageTitle>
      <p className="mb-3 text-sm">
        <Link to={`/projects/${projectId}/sandboxes`}>All sandboxes</Link>
      </p>
      {sandbox.isPending ? <Loading what="the sandbox" /> : null}
      <ErrorNote error={sandbox.error} retry={() => void sandbox.refetch()} />
      {s ? (
        <>
          <dl className="mb-6 grid grid-cols-[max-content_1fr] gap-x-4 gap-y-1 text-sm">
            <dt className="font-medium">State</dt>
            <dd data-testid="detail-state">{s.state}</dd>
            <dt className="font-medium">Image</dt>
            <dd className="font-mono text-xs">{s.image}</dd>
            <dt className="font-medium">Current revision</dt>
            <dd data-testid="current-revision">{s.currentRevision}</dd>
            <dt className="font-medium">Slug</dt>
            <dd className="font-mono text-xs">{s.slug}</dd>
            <dt className="font-medium">Limits</dt>
            <dd data-testid="limits">{describeLimits(s.resources)}</dd>
          </dl>
          <UnenforcedLimitsWarning sandbox={s} />
          {s.lastError ? <p className="mb-4 text-sm text-red-700 dark:text-red-300">{s.lastError}</p> : null}
          <Ports sandbox={s} />
          <Revisions sandbox={s} write={allows("sandboxes:write", role)} />
          <EffectivePolicy projectId={projectId} sandboxId={sandboxId} />
          <ShellSessions projectId={projectId} sandboxId={sandboxId} />
        </>
      ) : null}
    </>
  );
}

/** The ports the sandbox serves and where they are reached. */
function Ports({ sandbox }: { sandbox: Sandbox }) {
  return (
    <Section title="Exposed ports">
      <ExposedPorts ports={sandbox.ports} />
    </Section>
  );
}

function Revisions({ sandbox, write }: { sandbox: Sandbox; write: ReturnType<typeof allows> }) {
  const path = { projectId: sandbox.projectId, sandboxId: sandbox.id };
  const [target, setTarget] = useState<number | undefined>();
  const orgId = useProject(sandbox.projectId).data?.orgId;
  const revisions = useQuery({
    queryKey: ["sandbox-revisions", sandbox.projectId, sandbox.id, sandbox.currentRevision],
    queryFn: () => call("listSandboxRevisions", { path }),
  });
  return (
    <Section title="Revisions">
      {revisions.isPending ? <Loading what="revisions" /> : null}
      <ErrorNote error={revisions.error} retry={() => void revisions.refetch()} />
      {!write.allowed && write.reason ? <p className="mb-2 text-sm">Rolling back: {write.reason}.</p> : null}
      {revisions.data ? (
        <Table label="Revisions" headers={["Revision", "Image", "Author", "Reason", "Created", "Workspace", ""]}>
          {revisions.data.items.map((r) => (
            <tr key={r.revision}>
              <Td>
                {r.revision}
                {r.revision === sandbox.currentRevision ? <span className="ml-2 text-xs">(current)</span> : null}
              </Td>
              <Td mono>{r.spec.image}</Td>
              <Td>
                <PrincipalName principal={r.author} orgId={orgId} projectId={sandbox.projectId} />
              </Td>
              <Td>{r.reason ?? ""}</Td>
              <Td>{new Date(r.createdAt).toLocaleString()}</Td>
              <Td>{r.workspace ? `${r.workspace.method}, ${r.workspace.sizeBytes} bytes` : "none kept"}</Td>
              <Td>
                {r.revision === sandbox.currentRevision ? null : (
                  <Button
                    aria-label={`Roll back to revision ${r.revision}`}
                    disabled={!write.allowed}
                    title={write.reason}
                    onClick={() => setTarget(r.revision)}
                  >
                    Roll back
                  </Button>
                )}
              </Td>
            </tr>
          ))}
        </Table>
      ) : null}
      <RollbackDialog sandbox={sandbox} revision={target} onClose={() => setTarget(undefined)} />
    </Section>
  );
}

function RollbackDialog({
  sandbox,
  revision,
  onClose,
}: {
  sandbox: Sandbox;
  revision: number | undefined;
  onClose: () => void;
}) {
  const queryClient = useQueryClient();
  const [reason, setReason] = useState("");
  const rollback = useMutation({
    mutationFn: (rev: number) =>
      call("rollbackSandbox", {
        path: { projectId: sandbox.projectId, sandboxId: sandbox.id },
        body: { revision: rev, ...(reason ? { reason } : {}) },
      }),
    onSuccess: (updated) => {
      queryClient.setQueryData(["sandbox", sandbox.projectId, sandbox.id], updated);
      void queryClient.invalidateQueries({ queryKey: ["sandboxes", sandbox.projectId] });
      void queryClient.invalidateQueries({ queryKey: ["shell-sessions", sandbox.projectId] });
      setReason("");
      onClose();
    },
  });
  return (
    <FormDialog
      open={revision !== undefined}
      onOpenChange={(open) => {
        if (!open) {
          rollback.reset();
          onClose();
        }
      }}
      locked={rollback.isPending}
      title={`Roll back ${sandbox.name} to revision ${revision ?? ""}`}
      description={
        sandbox.state === "running"
          ? "This makes a new revision with that spec and restores its workspace where one was kept. The running sandbox restarts: its processes and shell sessions end."
          : "This makes a new revision with that spec and restores its workspace where one was kept."
      }
      submission={rollback}
      onSubmit={() => {
        if (revision !== undefined) rollback.mutate(revision);
      }}
      submitLabel="Roll back"
      pendingLabel="Rolling back…"
      submitVariant="danger"
      cancelLabel="Cancel"
      below={
        rollback.isPending ? (
          <p role="status" className="mb-2 text-sm">
            Rolling back{sandbox.state === "running" ? " and restarting" : ""}…
          </p>
        ) : null
      }
    >
      <TextField label="Reason" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
    </FormDialog>
  );
}

const DECISION_STYLE = {
  allow: "text-green-800 dark:text-green-300",
  deny: "text-red-700 dark:text-red-300",
  conditional: "text-amber-800 dark:text-amber-300",
} as const;

function EffectivePolicy({ projectId, sandboxId }: { projectId: string; sandboxId: string }) {
  const policy = useQuery({
    queryKey: ["effective-policy", projectId, sandboxId],
    queryFn: () => call("getSandboxEffectivePolicy", { path: { projectId, sandboxId } }),
  });
  const p = policy.data;
  return (
    <Section
      title="Effective policy"
      actions={
        <Button onClick={() => void policy.refetch()} disabled={policy.isFetching}>
          Re-evaluate
        </Button>
      }
    >
      {policy.isPending ? <Loading what="the effective policy" /> : null}
      <ErrorNote error={policy.error} retry={() => void policy.refetch()} />
      {p ? (
        <>
          <p className="mb-2 text-sm" data-testid="egress">
            Egress: <strong>{p.egress.access}</strong>
            {p.egress.allowedHosts.length ? ` — allowed: ${p.egress.allowedHosts.join(", ")}` : ""}
            {p.egress.deniedHosts.length ? ` — denied: ${p.egress.deniedHosts.join(", ")}` : ""}
          </p>
          <h3 className="mt-3 mb-1 font-medium">Bindings</h3>
          {p.bindings.length ? (
            <Table label="Policy bindings" headers={["Policy", "Version", "Scope", "Mode"]}>
              {p.bindings.map((b) => (
                <tr key={b.bindingId}>
                  <Td>{b.policyName}</Td>
                  <Td>
                    {b.version}
                    {b.pinned ? " (pinned)" : ""}
                  </Td>
                  <Td>{b.scope}</Td>
                  <Td>{b.mode}</Td>
                </tr>
              ))}
            </Table>
          ) : (
            <p className="text-sm">No policy binding reaches this sandbox.</p>
          )}
          <h3 className="mt-3 mb-1 font-medium">Actions</h3>
          <Table label="Sandbox actions" headers={["Action", "Decision", "Rules", "Mode"]}>
            {p.actions.map((a) => (
              <tr key={a.action}>
                <Td mono>{a.action}</Td>
                <Td>
                  <span className={DECISION_STYLE[a.decision]}>{a.decision}</span>
                  {a.governed ? "" : " (not governed)"}
                </Td>
                <Td mono>{a.ruleIds.join(", ")}</Td>
                <Td>{a.mode ?? ""}</Td>
              </tr>
            ))}
          </Table>
          <p className="mt-1 text-xs text-slate-600 dark:text-slate-300">
            Evaluated {new Date(p.evaluatedAt).toLocaleString()}
          </p>
        </>
      ) : null}
    </Section>
  );
}

function ShellSessions({ projectId, sandboxId }: { projectId: string; sandboxId: string }) {
  const sessions = useQuery({
    queryKey: ["shell-sessions", projectId],
    queryFn: () => call("listShellSessions", { path: { projectId } }),
  });
  const mine = sessions.data?.items.filter((x) => x.sandboxId === sandboxId);
  return (
    <Section
      title="Shell sessions"
      actions={
        <Button onClick={() => void sessions.refetch()} disabled={sessions.isFetching}>
          Refresh
        </Button>
      }
    >
      {sessions.isPending ? <Loading what="shell sessions" /> : null}
      <ErrorNote error={sessions.error} retry={() => void sessions.refetch()} />
      {mine?.length ? (
        <Table label="Shell sessions" headers={["Session", "Opened", "Last activity", "Expires"]}>
          {mine.map((x) => (
            <tr key={x.id}>
              <Td mono>{x.id}</Td>
              <Td>{new Date(x.createdAt).toLocaleString()}</Td>
              <Td>{new Date(x.lastActivityAt).toLocaleString()}</Td>
              <Td>{new Date(x.expiresAt).toLocaleString()}</Td>
            </tr>
          ))}
        </Table>
      ) : sessions.isSuccess ? (
        <p className="text-sm">No open shell sessions.</p>
      ) : null}
    </Section>
  );
}
