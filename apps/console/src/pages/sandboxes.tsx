import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useState } from "react";
import { Link, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useProject, useProjectRole } from "../api/hooks.ts";
import type { Sandbox } from "../api/types.ts";
import { FormDialog } from "../components/form.tsx";
import { RunCommand } from "../components/run-command.tsx";
import { UnenforcedLimitsMarker } from "../components/sandbox-limits.tsx";
import { Button, ErrorNote, Guarded, INPUT, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { allows } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

const Terminal = lazy(() => import("../components/terminal.tsx"));

const STATES = ["", "pending", "starting", "running", "stopping", "stopped", "failed", "deleting"];

export default function SandboxesPage() {
  const { projectId } = useParams() as { projectId: string };
  const project = useProject(projectId);
  const role = useProjectRole(projectId);
  const queryClient = useQueryClient();
  const [state, setState] = useState("");
  const [creating, setCreating] = useState(false);
  const [terminal, setTerminal] = useState<string | undefined>();
  const write = allows("sandboxes:write", role);
  const exec = allows("sandboxes:exec", role);
  const sandboxes = useQuery({
    queryKey: ["sandboxes", projectId, state],
    queryFn: () =>
      call("listSandboxes", {
        path: { projectId },
        query: { limit: 50, ...(state ? { state: state as Sandbox["state"] } : {}) },
      }),
    // A sandbox on its way somewhere is followed until it gets there.
    refetchInterval: (q) =>
      q.state.data?.items.some((s) => ["pending", "starting", "stopping", "deleting"].includes(s.state)) ? 1000 : false,
  });
  const act = useMutation({
    mutationFn: ({ id, action }: { id: string; action: "start" | "stop" | "delete" }) =>
      call(action === "delete" ? "deleteSandbox" : action === "start" ? "startSandbox" : "stopSandbox", {
        path: { projectId, sandboxId: id },
      }),
    onSettled: () => void queryClient.invalidateQueries({ queryKey: ["sandboxes", projectId] }),
  });
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={write}>
            {(disabled) => (
              <Button variant="primary" disabled={disabled} onClick={() => setCreating(true)}>
                New sandbox
              </Button>
            )}
          </Guarded>
        }
      >
        Sandboxes{project.data ? ` of ${project.data.name}` : ""}
      </PageTitle>
      {project.data ? (
        <p className="mb-3 text-sm">
          <Link to={`/orgs/${project.data.orgId}/projects`}>All projects</Link>
        </p>
      ) : null}
      <label className="mb-3 flex items-center gap-2 text-sm">
        State
        <select className={INPUT} value={state} onChange={(e) => setState(e.target.value)}>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s || "any"}
            </option>
          ))}
        </select>
      </label>
      {sandboxes.isPending ? <Loading what="sandboxes" /> : null}
      <ErrorNote error={sandboxes.error} retry={() => void sandboxes.refetch()} />
      <ErrorNote error={act.error} />
      {sandboxes.data?.items.length ? (
        <Table label="Sandboxes" headers={["Name", "Image", "State", "Actions"]}>
          {sandboxes.data.items.map((s) => (
            <tr key={s.id}>
              <Td wrap>
                <Link to={`/projects/${projectId}/sandboxes/${s.id}`}>{s.name}</Link>
                <div className="font-mono text-xs text-slate-600 dark:text-slate-300">{s.id}</div>
              </Td>
              <Td mono>{s.image}</Td>
              <Td>
                <span data-testid={`state-${s.name}`}>{s.state}</span>
                {s.lastError ? <div className="text-xs text-red-700 dark:text-red-300">{s.lastError}</div> : null}
                <UnenforcedLimitsMarker unenforced={s.unenforcedLimits} />
              </Td>
              <Td>
                <div className="flex flex-wrap gap-2">
                  <Button
                    aria-label={`Start ${s.name}`}
                    disabled={!write.allowed || s.state === "running" || act.isPending}
                    title={write.reason}
                    onClick={() => act.mutate({ id: s.id, action: "start" })}
                  >
                    Start
                  </Button>
                  <Button
                    aria-label={`Stop ${s.name}`}
                    disabled={!write.allowed || s.state !== "running" || act.isPending}
                    title={write.reason}
                    onClick={() => act.mutate({ id: s.id, action: "stop" })}
                  >
                    Stop
                  </Button>
                  <Button
                    aria-label={`Terminal of ${s.name}`}
                    disabled={!exec.allowed || s.state !== "running"}
                    title={exec.reason}
                    onClick={() => setTerminal(terminal === s.id ? undefined : s.id)}
                  >
                    Terminal
                  </Button>
                  <Button
                    variant="danger"
                    aria-label={`Delete ${s.name}`}
                    disabled={!write.allowed || act.isPending}
                    title={write.reason}
                    onClick={() =>
                      window.confirm(`Delete the sandbox ${s.name}?`) && act.mutate({ id: s.id, action: "delete" })
                    }
                  >
                    Delete
                  </Button>
                </div>
              </Td>
            </tr>
          ))}
        </Table>
      ) : sandboxes.isSuccess ? (
        <p className="text-sm">No sandboxes{state ? ` in state ${state}` : ""}.</p>
      ) : null}
      {!write.allowed && write.reason ? (
        <p className="mt-2 text-sm">Creating and changing sandboxes: {write.reason}.</p>
      ) : null}
      {terminal ? (
        <>
          <Suspense fallback={<Loading what="the terminal" />}>
            <Terminal key={terminal} projectId={projectId} sandboxId={terminal} />
          </Suspense>
          <RunCommand projectId={projectId} sandboxId={terminal} allowance={exec} />
        </>
      ) : null}
      <CreateSandbox projectId={projectId} open={creating} onOpenChange={setCreating} />
    </>
  );
}

function CreateSandbox({
  projectId,
  open,
  onOpenChange,
}: {
  projectId: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [image, setImage] = useState("");
  const [start, setStart] = useState(true);
  const create = useMutation({
    mutationFn: () =>
      call("createSandbox", { path: { projectId }, body: { name, start, ...(image ? { image } : {}) } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["sandboxes", projectId] });
      setName("");
      onOpenChange(false);
    },
  });
  const fieldError = fieldErrorsOf(create.error);
  return (
    <FormDialog
      open={open}
      onOpenChange={onOpenChange}
      title="New sandbox"
      submission={create}
      onSubmit={() => create.mutate()}
      submitLabel="Create sandbox"
      pendingLabel="Creating…"
    >
      <TextField
        label="Name"
        error={fieldError("name")}
        required
        maxLength={100}
        value={name}
        onChange={(e) => setName(e.target.value)}
      />
      <TextField
        label="Image"
        error={fieldError("image")}
        hint="Empty for the installation's default image"
        maxLength={512}
        value={image}
        onChange={(e) => setImage(e.target.value)}
      />
      <label className="mb-3 flex items-center gap-2 text-sm">
        <input type="checkbox" checked={start} onChange={(e) => setStart(e.target.checked)} />
        Start it right away
      </label>
    </FormDialog>
  );
}
