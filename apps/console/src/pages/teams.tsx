import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useParams } from "react-router";
import { call } from "../api/client.ts";
import { useOrgRole } from "../api/hooks.ts";
import { RoleField } from "../components/form.tsx";
import {
  Button,
  ErrorNote,
  Field,
  Guarded,
  INPUT,
  Loading,
  PageTitle,
  Table,
  Td,
  TextField,
} from "../components/ui.tsx";
import { type Allowance, allows, type ProjectRole } from "../lib/permissions.ts";
import { ApiError } from "../lib/problem.ts";

const PROJECT_ROLES: ProjectRole[] = ["viewer", "developer", "admin"];

/** Teams, their members and the project roles they grant. */
export default function TeamsPage() {
  const { orgId } = useParams() as { orgId: string };
  const role = useOrgRole(orgId);
  const manage = allows("teams:manage", { ...(role ? { org: role } : {}) });
  const [open, setOpen] = useState<string>();
  const teams = useQuery({
    queryKey: ["teams", orgId],
    queryFn: () => call("listTeams", { path: { orgId }, query: { limit: 100 } }),
  });
  return (
    <>
      <PageTitle>Teams</PageTitle>
      {!manage.allowed ? (
        <p className="mb-3 text-sm">Creating teams and changing their members and access: {manage.reason}.</p>
      ) : null}
      <CreateTeam orgId={orgId} manage={manage} />
      {teams.isPending ? <Loading what="teams" /> : null}
      <ErrorNote error={teams.error} retry={() => void teams.refetch()} />
      {teams.data?.items.length ? (
        <Table label="Teams" headers={["Name", "Description", ""]}>
          {teams.data.items.map((t) => (
            <tr key={t.id}>
              <Td wrap>{t.name}</Td>
              <Td>{t.description ?? ""}</Td>
              <Td>
                <Button aria-expanded={open === t.id} onClick={() => setOpen(open === t.id ? undefined : t.id)}>
                  {open === t.id ? "Hide" : "Members and access"}
                  <span className="sr-only"> of {t.name}</span>
                </Button>
              </Td>
            </tr>
          ))}
        </Table>
      ) : teams.isSuccess ? (
        <p className="text-sm">No teams yet.</p>
      ) : null}
      {open ? <TeamDetail orgId={orgId} teamId={open} manage={manage} onDeleted={() => setOpen(undefined)} /> : null}
    </>
  );
}

function CreateTeam({ orgId, manage }: { orgId: string; manage: Allowance }) {
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const create = useMutation({
    mutationFn: () => call("createTeam", { path: { orgId }, body: { name } }),
    onSuccess: () => {
      setName("");
      void queryClient.invalidateQueries({ queryKey: ["teams", orgId] });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  const fieldError = create.error instanceof ApiError ? create.error.fieldError("name") : undefined;
  return (
    <form onSubmit={submit} className="mb-4 flex flex-wrap items-end gap-2" aria-label="Create a team">
      <TextField
        label="New team"
        maxLength={100}
        value={name}
        error={fieldError}
        disabled={!manage.allowed}
        onChange={(e) => setName(e.target.value)}
      />
      <div className="mb-3">
        <Guarded allowance={manage}>
          {(disabled) => (
            <Button type="submit" variant="primary" disabled={disabled || create.isPending || !name.trim()}>
              Create team
            </Button>
          )}
        </Guarded>
      </div>
      {fieldError ? null : <ErrorNote error={create.error} />}
    </form>
  );
}

function TeamDetail({
  orgId,
  teamId,
  manage,
  onDeleted,
}: {
  orgId: string;
  teamId: string;
  manage: Allowance;
  onDeleted: () => void;
}) {
  const queryClient = useQueryClient();
  const team = useQuery({ queryKey: ["team", teamId], queryFn: () => call("getTeam", { path: { teamId } }) });
  const members = useQuery({
    queryKey: ["members", orgId, "all"],
    queryFn: () => call("listMembers", { path: { orgId }, query: { limit: 200 } }),
  });
  const projects = useQuery({
    queryKey: ["projects", orgId, "choices"],
    queryFn: () => call("listProjects", { path: { orgId }, query: { limit: 200 } }),
  });
  const refresh = () => void queryClient.invalidateQueries({ queryKey: ["team", teamId] });
  const addMember = useMutation({
    mutationFn: (userId: string) => call("addTeamMember", { path: { teamId, userId } }),
    onSuccess: refresh,
  });
  const removeMember = useMutation({
    mutationFn: (userId: string) => call("removeTeamMember", { path: { teamId, userId } }),
    onSuccess: refresh,
  });
  const grant = useMutation({
    mutationFn: (v: { projectId: string; role: ProjectRole }) =>
      call("grantTeamProject", { path: { teamId, projectId: v.projectId }, body: { role: v.role } }),
    onSuccess: refresh,
  });
  const revoke = useMutation({
    mutationFn: (projectId: string) => call("revokeTeamProject", { path: { teamId, projectId } }),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: () => call("deleteTeam", { path: { teamId } }),
    onSuccess: () => {
      void queryClient.invalidateQueries({ queryKey: ["teams", orgId] });
      onDeleted();
    },
  });
  const [userId, setUserId] = useState("");
  const [projectId, setProjectId] = useState("");
  const [projectRole, setProjectRole] = useState<ProjectRole>("developer");
  const nameOf = (id: string) => {
    const m = members.data?.items.find((x) => x.userId === id);
    return m?.displayName ?? m?.email ?? id;
  };
  const projectName = (id: string) => projects.data?.items.find((p) => p.id === id)?.name ?? id;
  const t = team.data;
  if (team.isPending) return <Loading what="the team" />;
  if (!t) return <ErrorNote error={team.error} retry={() => void team.refetch()} />;
  const inTeam = new Set(t.members?.map((m) => m.userId));
  return (
    <section
      aria-label={`Team ${t.name}`}
      className="mt-6 rounded-md border border-slate-200 p-4 dark:border-slate-700"
    >
      <h2 className="mb-3 text-lg font-semibold">{t.name}</h2>
      <ErrorNote error={addMember.error ?? removeMember.error ?? grant.error ?? revoke.error ?? remove.error} />
      <h3 className="mb-2 font-medium">Members</h3>
      <ul className="mb-3 text-sm">
        {t.members?.length ? null : <li>No members yet.</li>}
        {t.members?.map((m) => (
          <li key={m.userId} className="mb-1 flex items-center gap-2">
            {nameOf(m.userId)}
            <Button
              disabled={!manage.allowed}
              aria-label={`Remove ${nameOf(m.userId)} from ${t.name}`}
              onClick={() => removeMember.mutate(m.userId)}
            >
              Remove
            </Button>
          </li>
        ))}
      </ul>
      <div className="mb-4 flex items-end gap-2">
        <Field label="Add a member">
          {(p) => (
            <select {...p} className={INPUT} value={userId} onChange={(e) => setUserId(e.target.value)}>
              <option value="">Choose a member</option>
              {members.data?.items
                .filter((m) => !inTeam.has(m.userId))
                .map((m) => (
                  <option key={m.userId} value={m.userId}>
                    {m.displayName ?? m.email ?? m.userId}
                  </option>
                ))}
            </select>
          )}
        </Field>
        <div className="mb-3">
          <Guarded allowance={manage}>
            {(disabled) => (
              <Button disabled={disabled || !userId} onClick={() => addMember.mutate(userId)}>
                Add to team
              </Button>
            )}
          </Guarded>
        </div>
      </div>
      <h3 className="mb-2 font-medium">Project access</h3>
      {t.projects?.length ? (
        <Table label={`Project access of ${t.name}`} headers={["Project", "Role", ""]}>
          {t.projects.map((g) => (
            <tr key={g.projectId}>
              <Td>{projectName(g.projectId)}</Td>
              <Td>{g.role}</Td>
              <Td>
                <Button
                  disabled={!manage.allowed}
                  aria-label={`Revoke ${t.name}'s access to ${projectName(g.projectId)}`}
                  onClick={() => revoke.mutate(g.projectId)}
                >
                  Revoke
                </Button>
              </Td>
            </tr>
          ))}
        </Table>
      ) : (
        <p className="mb-2 text-sm">No project access yet.</p>
      )}
      <div className="mt-3 flex flex-wrap items-end gap-2">
        <Field label="Project">
          {(p) => (
            <select {...p} className={INPUT} value={projectId} onChange={(e) => setProjectId(e.target.value)}>
              <option value="">Choose a project</option>
              {projects.data?.items.map((pr) => (
                <option key={pr.id} value={pr.id}>
                  {pr.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <RoleField label="Project role" roles={PROJECT_ROLES} value={projectRole} onChange={setProjectRole} />
        <div className="mb-3">
          <Guarded allowance={manage}>
            {(disabled) => (
              <Button disabled={disabled || !projectId} onClick={() => grant.mutate({ projectId, role: projectRole })}>
                Grant access
              </Button>
            )}
          </Guarded>
        </div>
      </div>
      <div className="mt-4">
        <Guarded allowance={manage}>
          {(disabled) => (
            <Button variant="danger" disabled={disabled || remove.isPending} onClick={() => remove.mutate()}>
              Delete team
            </Button>
          )}
        </Guarded>
      </div>
    </section>
  );
}
