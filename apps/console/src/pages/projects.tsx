import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { FormDialog } from "../components/form.tsx";
import { Button, ErrorNote, Guarded, Loading, PageTitle, Table, Td, TextField } from "../components/ui.tsx";
import { type Allowance, allows, projectRoleOf } from "../lib/permissions.ts";
import { fieldErrorsOf } from "../lib/problem.ts";

const PAGE = 25;

export function ProjectsPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const [creating, setCreating] = useState(false);
  const projects = useInfiniteQuery({
    queryKey: ["projects", orgId],
    queryFn: ({ pageParam }) => call("listProjects", { path: { orgId }, query: { limit: PAGE, cursor: pageParam } }),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor,
  });
  const rows = projects.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <>
      <PageTitle
        actions={
          <Guarded allowance={allows("projects:create", { ...(role ? { org: role } : {}) })}>
            {(disabled) => (
              <Button variant="primary" disabled={disabled} onClick={() => setCreating(true)}>
                New project
              </Button>
            )}
          </Guarded>
        }
      >
        Projects
      </PageTitle>
      {projects.isPending ? <Loading what="projects" /> : null}
      <ErrorNote error={projects.error} retry={() => void projects.refetch()} />
      {rows.length ? (
        <Table label="Projects" headers={["Name", "Id", "Labels", "Your role", ""]}>
          {rows.map((p) => (
            <tr key={p.id}>
              <Td wrap>{p.name}</Td>
              <Td mono>{p.id}</Td>
              <Td mono>
                {Object.entries(p.labels)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(", ")}
              </Td>
              <Td>{p.role ?? ""}</Td>
              <Td>
                <Link to={`/projects/${p.id}/sandboxes`}>Sandboxes</Link>
                {" · "}
                <a href={`/v1/projects/${p.id}/.well-known/jwks.json`}>JWKS</a>
                {" · "}
                <RotateKeys
                  projectId={p.id}
                  name={p.name}
                  allowance={allows("project:keys:rotate", {
                    ...(role ? { org: role, project: projectRoleOf(role, p.role) } : {}),
                  })}
                />
              </Td>
            </tr>
          ))}
        </Table>
      ) : projects.isSuccess ? (
        <p className="text-sm">No projects yet.</p>
      ) : null}
      {projects.hasNextPage ? (
        <Button className="mt-3" onClick={() => void projects.fetchNextPage()} disabled={projects.isFetchingNextPage}>
          {projects.isFetchingNextPage ? "Loading…" : "Load more"}
        </Button>
      ) : null}
      <CreateProject orgId={orgId} open={creating} onOpenChange={setCreating} />
    </>
  );
}

function CreateProject({
  orgId,
  open,
  onOpenChange,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
}) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useMutation({
    mutationFn: () =>
      call("createProject", { path: { orgId }, body: { name, ...(description ? { description } : {}) } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["projects", orgId] });
      setName("");
      setDescription("");
      onOpenChange(false);
    },
  });
  const fieldError = fieldErrorsOf(create.error);
  return (
    <FormDialog
      open={open}
      onOpenChange={onOpenChange}
      title="New project"
      submission={create}
      onSubmit={() => create.mutate()}
      submitLabel="Create project"
      pendingLabel="Creating…"
      fieldErrorsBeside
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
        label="Description"
        error={fieldError("description")}
        maxLength={1000}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
    </FormDialog>
  );
}

/** Rotates the project's signing keys; the previous key stays in the JWKS for the grace period. */
function RotateKeys({ projectId, name, allowance }: { projectId: string; name: string; allowance: Allowance }) {
  const rotate = useMutation({ mutationFn: () => call("rotateProjectKeys", { path: { projectId } }) });
  return (
    <span className="inline-flex flex-col gap-1">
      <Guarded allowance={allowance}>
        {(disabled) => (
          <Button
            aria-label={`Rotate keys of ${name}`}
            disabled={disabled || rotate.isPending}
            onClick={() => rotate.mutate()}
          >
            {rotate.isPending ? "Rotating…" : "Rotate keys"}
          </Button>
        )}
      </Guarded>
      {rotate.data ? (
        <span role="status" className="text-xs">
          New key {rotate.data.kid}; {rotate.data.previousKid} stays published until{" "}
          {new Date(rotate.data.previousPublishedUntil).toLocaleString()}
        </span>
      ) : null}
      <ErrorNote error={rotate.error} />
    </span>
  );
}
