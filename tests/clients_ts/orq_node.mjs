// @orq-ai/node (the pinned version in package.json) against Redline's reviews surface, built as its
// documents build it with only the host and the key changed.
//
//   REDLINE_URL=http://127.0.0.1:8000 ORQ_API_KEY=rl_... node orq_node.mjs <scenario> '<ids as JSON>'
//
// Runs one scenario's calls in order and prints one JSON object: for each call, {"ok": what it returned}
// or {"error": the error it raised, with the client's own class}. tests/clients_ts/test_orq_node.py
// sets the data up, runs a scenario and asserts on what it printed.
import { Orq } from "@orq-ai/node";
import * as errors from "@orq-ai/node/models/errors/index.js";
import { recorder } from "./scenarios.mjs";

const [scenario, given = "{}"] = process.argv.slice(2);
const ids = JSON.parse(given);
const orq = new Orq({ apiKey: process.env.ORQ_API_KEY, serverURL: process.env.REDLINE_URL });

function described(error) {
  return {
    class: error?.constructor?.name ?? typeof error,
    orqError: error instanceof errors.OrqError,
    statusCode: error?.statusCode ?? null,
    message: String(error?.message ?? error),
    body: error?.body ?? null,
    code: error?.code ?? null,
    cause: error?.cause === undefined ? null : String(error.cause),
  };
}

const { call, run } = recorder(described);

const at = { traceId: ids.traceId, spanId: ids.spanId };

// The TypeScript tab's examples of annotations.create, in its order: [name, annotations, metadata?].
const EXAMPLES = [
  ["rating", [{ key: "rating", value: "good" }]],
  ["defects", [{ key: "defects", value: ["grammatical", "spelling", "ambiguity"] }]],
  ["score", [{ key: "confidence_score", value: 0.95 }], { identityId: "user-123" }],
  ["text", [{ key: "correction", value: "The correct answer should emphasize scalability and fault tolerance." }]],
  [
    "evaluator",
    [
      {
        parentAnnotationId: ids.evaluatorAnnotationId,
        value: false,
        explanation: "The response omitted a required disclaimer.",
      },
    ],
  ],
  [
    "batch",
    [
      { key: "rating", value: "good" },
      { key: "confidence_score", value: 0.92 },
      { key: "categories", value: ["helpful", "accurate", "concise"] },
    ],
  ],
];
const REMOVED_KEYS = ["rating", "defects"];

const SCENARIOS = {
  // The examples word for word. The client takes a body only under `requestBody` and drops the
  // top-level `annotations`, `metadata` and `keys`, so each of these sends no body at all.
  async annotationsAsWritten() {
    for (const [name, annotations, metadata] of EXAMPLES) {
      await call(name, () => orq.annotations.create({ ...at, annotations, ...(metadata ? { metadata } : {}) }));
    }
    await call("remove", () => orq.annotations.delete({ ...at, keys: REMOVED_KEYS }));
  },

  // The examples named in `ids.examples`, in order, with their body where the client takes it; then,
  // with `ids.remove`, the Remove Annotations example and the removal of the evaluator's correction.
  async annotations() {
    for (const [name, annotations, metadata] of EXAMPLES.filter(([name]) => ids.examples.includes(name))) {
      await call(name, () =>
        orq.annotations.create({ ...at, requestBody: metadata ? { annotations, metadata } : { annotations } }),
      );
    }
    if (!ids.remove) return;
    await call("remove", () => orq.annotations.delete({ ...at, requestBody: { keys: REMOVED_KEYS } }));
    await call("removeCorrection", () =>
      orq.annotations.delete({ ...at, requestBody: { parentAnnotationIds: [ids.evaluatorAnnotationId] } }),
    );
  },

  // The document's API Error Handling table, one call each: {name: [annotation, spanId]}.
  async refusals() {
    for (const [name, [annotation, spanId]] of Object.entries(ids.refusals)) {
      await call(name, () => orq.annotations.create({ traceId: ids.traceId, spanId, requestBody: { annotations: [annotation] } }));
    }
  },

  async queues() {
    const queue = await call("create", () =>
      orq.annotationQueues.create({ displayName: "Support quality", description: "Human review", projectId: ids.projectId }),
    );
    const queueId = queue.id;
    await call("retrieve", () => orq.annotationQueues.retrieve({ annotationQueueId: queueId }));
    await call("update", () =>
      orq.annotationQueues.update({
        annotationQueueId: queueId,
        updateAnnotationQueueRequest: { description: "Q3 scope", humanReviewIds: ids.humanReviewIds },
      }),
    );
    const other = await call("createOther", () =>
      orq.annotationQueues.create({ displayName: "Other", description: "", projectId: ids.projectId }),
    );
    await call("list", () => orq.annotationQueues.list({ limit: 1 }));
    await call("listAfter", () => orq.annotationQueues.list({ limit: 5, startingAfter: other.id }));
    await call("listBefore", () => orq.annotationQueues.list({ endingBefore: queueId }));
    await call("search", () => orq.annotationQueues.list({ search: "support" }));
    const added = await call("addItems", () =>
      orq.annotationQueues.addItems({
        annotationQueueId: queueId,
        addAnnotationQueueItemsRequest: {
          items: [
            { traceId: ids.traceId, spanId: ids.spanId },
            { traceId: ids.traceId, spanId: ids.traceId },
          ],
        },
      }),
    );
    await call("addAgain", () =>
      orq.annotationQueues.addItems({
        annotationQueueId: queueId,
        addAnnotationQueueItemsRequest: { items: [{ traceId: ids.traceId, spanId: ids.spanId }] },
      }),
    );
    await call("counted", () => orq.annotationQueues.retrieve({ annotationQueueId: queueId }));
    await call("listItems", () => orq.annotationQueues.listItems({ annotationQueueId: queueId, limit: 1 }));
    await call("listItemsAfter", () =>
      orq.annotationQueues.listItems({ annotationQueueId: queueId, startingAfter: added[0].id }),
    );
    await call("retrieveItem", () => orq.annotationQueues.retrieveItem({ annotationQueueId: queueId, itemId: added[0].id }));
    await call("removeItems", () =>
      orq.annotationQueues.removeItems({
        annotationQueueId: queueId,
        removeAnnotationQueueItemsRequest: { spanIds: [ids.spanId] },
      }),
    );
    await call("afterRemove", () => orq.annotationQueues.listItems({ annotationQueueId: queueId }));
    await call("clear", () => orq.annotationQueues.clear({ annotationQueueId: queueId }));
    await call("afterClear", () => orq.annotationQueues.listItems({ annotationQueueId: queueId }));
    await call("delete", () => orq.annotationQueues.delete({ annotationQueueId: queueId }));
    await call("deleted", () => orq.annotationQueues.retrieve({ annotationQueueId: queueId }));
    await call("unknownSpan", () =>
      orq.annotationQueues.addItems({
        annotationQueueId: other.id,
        addAnnotationQueueItemsRequest: { items: [{ traceId: ids.traceId, spanId: "xyz789" }] },
      }),
    );
  },

  async datasets() {
    const dataset = await call("create", () => orq.datasets.create({ displayName: "support_quality_eval", path: "default/evals" }));
    const datasetId = dataset.id;
    await call("retrieve", () => orq.datasets.retrieve({ datasetId }));
    await call("update", () => orq.datasets.update({ datasetId, requestBody: { displayName: "renamed" } }));
    await call("list", () => orq.datasets.list({ limit: 10 }));
    await call("listInProject", () => orq.datasets.list({ projectId: ids.projectId }));
    const made = await call("createDatapoint", () =>
      orq.datasets.createDatapoint({
        datasetId,
        requestBody: [
          { inputs: { q: "refund?" }, expectedOutput: "yes" },
          { messages: [{ role: "user", content: "hi" }] },
        ],
      }),
    );
    await call("listDatapoints", () => orq.datasets.listDatapoints({ datasetId, limit: 1 }));
    await call("listDatapointsAfter", () => orq.datasets.listDatapoints({ datasetId, startingAfter: made[1].id }));
    await call("retrieveDatapoint", () => orq.datasets.retrieveDatapoint({ datasetId, datapointId: made[0].id }));
    await call("updateDatapoint", () =>
      orq.datasets.updateDatapoint({ datasetId, datapointId: made[0].id, requestBody: { expectedOutput: "no" } }),
    );
    await call("deleteDatapoint", () => orq.datasets.deleteDatapoint({ datasetId, datapointId: made[0].id }));
    await call("afterDelete", () => orq.datasets.listDatapoints({ datasetId }));
    await call("counted", () => orq.datasets.retrieve({ datasetId }));
    await call("clear", () => orq.datasets.clear({ datasetId }));
    await call("afterClear", () => orq.datasets.listDatapoints({ datasetId }));
    await call("delete", () => orq.datasets.delete({ datasetId }));
    await call("deleted", () => orq.datasets.retrieve({ datasetId }));
    await call("deletedDatapoints", () => orq.datasets.listDatapoints({ datasetId }));
    // A datapoint the review screen's "Add to dataset" made from a trace with a tool call.
    await call("fromTrace", () => orq.datasets.listDatapoints({ datasetId: ids.fromTraceDatasetId }));
  },

  async traces() {
    await call("get", () => orq.traces.get({ traceId: ids.traceId }));
    const first = await call("listSpans", () => orq.traces.listSpans({ traceId: ids.traceId, limit: 1 }));
    await call("listSpansNext", () => orq.traces.listSpans({ traceId: ids.traceId, pageToken: first.nextPageToken }));
    await call("getSpan", () => orq.traces.getSpan({ traceId: ids.traceId, spanId: ids.spanId }));
    await call("getRootSpan", () => orq.traces.getSpan({ traceId: ids.traceId, spanId: "root" }));
    await call("search", () =>
      orq.traces.search({
        from: new Date("2026-11-01T00:00:00Z"),
        to: new Date("2026-11-02T00:00:00Z"),
        filters: [{ field: "agent.name", op: "eq", values: ["support-agent"] }],
      }),
    );
    await call("searchNothing", () =>
      orq.traces.search({ from: new Date("2026-10-01T00:00:00Z"), to: new Date("2026-10-02T00:00:00Z") }),
    );
    await call("missingTrace", () => orq.traces.get({ traceId: ids.missingTraceId }));
    await call("missingSpan", () => orq.traces.getSpan({ traceId: ids.traceId, spanId: "nope" }));
  },
};

await run(SCENARIOS, scenario);
