// @kindgi/client (the version tests/clients_ts/nodeclients.py lays in from the kindgi-cli wheel) against
// Redline's judgments-era routes, built as its README builds it with only the host and the token changed.
//
//   REDLINE_URL=http://127.0.0.1:8000 KINDGI_API_TOKEN=rl_... node kindgi_client.mjs <scenario> '<ids as JSON>'
//
// Runs one scenario's calls in order and prints one JSON object: for each call, {"ok": what it returned}
// or {"error": the error it raised, with the client's own class and its typed error}; a list read page by
// page is {"ok": [page, ...]}. tests/clients_ts/test_kindgi_client.py sets the data up, runs a scenario
// and asserts on what it printed.
import { KindgiApiError, createClient } from "@kindgi/client";
import { recorder } from "./scenarios.mjs";

const [scenario, given = "{}"] = process.argv.slice(2);
const ids = JSON.parse(given);
const client = createClient({
  apiUrl: process.env.REDLINE_URL,
  auth: { kind: "apiToken", token: process.env.KINDGI_API_TOKEN },
});
const MAX_PAGES = 20;

function described(error) {
  return {
    class: error?.constructor?.name ?? typeof error,
    kindgiApiError: error instanceof KindgiApiError,
    message: String(error?.message ?? error),
    // The client's typed error (KindgiError): code, serverCode, message and the variant's own fields.
    error: error?.error ?? null,
  };
}

const { call, run } = recorder(described);

// Reads a list page by page, following `nextCursor` while `hasMore`, and keeps every page under `name`.
async function pages(name, list) {
  return call(name, async () => {
    const read = [await list(undefined)];
    while (read.at(-1).hasMore && read.length < MAX_PAGES) read.push(await list(read.at(-1).nextCursor));
    return read;
  });
}

const project = ids.projectId;
const missing = ids.missingId;

const SCENARIOS = {
  async projects() {
    await pages("list", (cursor) => client.projects.list({ limit: 1, cursor }));
    await call("getDefault", () => client.projects.getDefault());
    await call("get", () => client.projects.get(ids.billingId));
    await call("notAnId", () => client.projects.get("nope"));
    await call("missing", () => client.projects.get(missing));
  },

  async runs() {
    await call("get", () => client.runs.get(ids.runId));
    await call("getFlow", () => client.runs.get(ids.flowRunId));
    await pages("list", (cursor) => client.runs.list({ limit: 1, cursor }));
    await call("inProject", () => client.runs.list({ scope: { kind: "project", projectId: project } }));
    await call("completed", () => client.runs.list({ status: "completed" }));
    await call("byAgent", () => client.runs.list({ agentId: ids.agentId }));
    await call("missing", () => client.runs.get(missing));
  },

  async judgments() {
    const item = { key: "kb-101", pointer: "/matches/0", rank: 0 };
    const no = { runId: ids.runId, item, verdict: "no", reason: "Outdated article." };
    const made = await call("create", () => client.judgments.create(no, { idempotencyKey: "judge-1182" }));
    await call("replay", () => client.judgments.create(no, { idempotencyKey: "judge-1182" }));
    await call("keyMismatch", () =>
      client.judgments.create({ ...no, verdict: "yes" }, { idempotencyKey: "judge-1182" }),
    );
    const yes = await call("yes", () =>
      client.judgments.create({
        runId: ids.otherRunId,
        item: { key: "kb-102" },
        verdict: "yes",
        participantId: "end-user-7",
      }),
    );
    await call("ofFlow", () =>
      client.judgments.create({ runId: ids.flowRunId, item: { key: "kb-102" }, verdict: "no" }),
    );
    await call("get", () => client.judgments.get(made.id));
    await pages("list", (cursor) => client.judgments.list({ limit: 1, cursor }));
    await call("byAgent", () => client.judgments.list({ agentId: ids.agentId, agentVersion: "v1" }));
    await call("byFlow", () => client.judgments.list({ flowId: ids.flowId }));
    await call("byVerdict", () => client.judgments.list({ verdict: "yes" }));
    await call("byRun", () => client.judgments.list({ runId: ids.runId }));
    await call("inProject", () => client.judgments.list({ scope: { kind: "project", projectId: project } }));
    await call("byParticipant", () => client.judgments.list({ participantId: "end-user-7" }));
    await call("unregister", () => client.judgments.unregister(yes.id));
    await call("unregistered", () => client.judgments.get(yes.id));
    await call("listAfter", () => client.judgments.list());
    await call("unregisterAgain", () => client.judgments.unregister(yes.id));
  },

  async judgmentRefusals() {
    const no = { runId: ids.runId, item: { key: "kb-101" }, verdict: "no" };
    await call("runNotFound", () => client.judgments.create({ ...no, runId: missing }));
    await call("runNotFinished", () => client.judgments.create({ ...no, runId: ids.runningRunId }));
    await call("itemNotFound", () =>
      client.judgments.create({ ...no, item: { key: "kb-9", pointer: "/matches/9" } }),
    );
    await call("classNotFound", () => client.judgments.create({ ...no, judgeClassId: missing }));
    await call("getMissing", () => client.judgments.get(missing));
    await call("unregisterMissing", () => client.judgments.unregister(missing));
    await call("orgScope", () => client.judgments.list({ scope: { kind: "org", orgId: project } }));
  },

  async judgeClasses() {
    const scope = { kind: "project", projectId: project };
    const leads = await call("create", () =>
      client.judgeClasses.create({ scope, name: "Support leads", weight: 2, description: "Leads" }),
    );
    const everyone = await call("tenant", () =>
      client.judgeClasses.create({ scope: { kind: "tenant" }, name: "Everyone", weight: 1 }),
    );
    await pages("list", (cursor) => client.judgeClasses.list({ limit: 1, cursor }));
    await call("inProject", () => client.judgeClasses.list({ scope }));
    await call("get", () => client.judgeClasses.get(leads.id));
    await call("update", () =>
      client.judgeClasses.update(
        leads.id,
        { weight: 3, assertableBy: { minReviewerRole: "senior" } },
        { idempotencyKey: "class-1" },
      ),
    );
    await call("lift", () => client.judgeClasses.update(leads.id, { assertableBy: null }));
    await call("unregister", () => client.judgeClasses.unregister(everyone.id));
    await call("unregistered", () => client.judgeClasses.get(everyone.id));
    await call("listAfter", () => client.judgeClasses.list());
    await call("nameTaken", () => client.judgeClasses.create({ scope, name: "Support leads", weight: 1 }));
    await call("missing", () => client.judgeClasses.get("nope"));
  },

  async judgingRules() {
    const rules = client.projects.judgingRules;
    const experts = await call("experts", () =>
      client.judgeClasses.create({ scope: { kind: "project", projectId: project }, name: "Experts", weight: 2 }),
    );
    const rule = await call("create", () =>
      rules.create(project, {
        name: "Support sample",
        when: { agentIds: [ids.agentId], versions: ["live"] },
        sample: 0.5,
        maxOpen: 5,
        judgeClassId: experts.id,
      }),
    );
    const everything = { name: "Everything", when: {}, enabled: false };
    await call("everything", () => rules.create(project, everything, { idempotencyKey: "rule-1" }));
    await call("replay", () => rules.create(project, everything, { idempotencyKey: "rule-1" }));
    await pages("list", (cursor) => rules.list(project, { limit: 1, cursor }));
    await call("get", () => rules.get(project, rule.ruleId));
    await call("update", () =>
      rules.update(project, rule.ruleId, { when: { agentIds: [ids.agentId] }, maxOpen: null, judgeClassId: null }),
    );
    await pages("versions", (cursor) => rules.versions(project, rule.ruleId, { limit: 1, cursor }));
    await call("preview", () => rules.preview(project, { agentIds: [ids.agentId] }));
    await call("previewLive", () =>
      rules.preview(project, { versions: ["live"], status: ["completed"], includeDryRuns: false, last: 10 }),
    );
    await call("results", () => rules.results(project, rule.ruleId));
    await call("resultsSince", () => rules.results(project, rule.ruleId, "2999-01-01T10:00:00Z"));
    await call("unregister", () => rules.unregister(project, rule.ruleId));
    await call("listAfter", () => rules.list(project));
    await call("updateAfter", () => rules.update(project, rule.ruleId, { name: "again" }));
    await call("missing", () => rules.get(project, missing));
    await call("unknownField", () => rules.create(project, { name: "x", when: {}, colour: "red" }));
    await call("notAProject", () => rules.list("nope"));
  },

  async judgingQueue() {
    const queue = client.projects.judgingQueue;
    await pages("list", (cursor) => queue.list(project, { limit: 1, cursor }));
    await call("judge", () =>
      client.judgments.create({
        runId: ids.runId,
        item: { key: "answer" },
        verdict: "no",
        judgeClassId: ids.classId,
      }),
    );
    await call("judged", () => queue.list(project, { state: "judged" }));
    await call("judgedByClass", () => client.judgments.list({ judgeClassId: ids.classId }));
    await call("open", () => queue.list(project, { state: "open" }));
    await call("byClass", () => queue.list(project, { judgeClassId: ids.classId }));
    await call("counted", () => queue.list(project, { limit: 0 }));
    await call("dismissJudged", () => queue.dismiss(project, ids.runId));
    await call("dismiss", () => queue.dismiss(project, ids.otherRunId, "Test traffic"));
    await call("reopen", () => queue.reopen(project, ids.otherRunId));
    await call("reopenAgain", () => queue.reopen(project, ids.otherRunId));
    await call("dismissAgain", () => queue.dismiss(project, ids.otherRunId));
    await call("missing", () => queue.dismiss(project, missing));
    await call("results", () => client.projects.judgingRules.results(project, ids.ruleId));
  },

  // Run with a token that can read but not write the project, or with one Redline never issued.
  async auth() {
    await call("list", () => client.judgments.list());
    await call("createRule", () => client.projects.judgingRules.create(project, { name: "x", when: {} }));
  },
};

await run(SCENARIOS, scenario);
