// A background job's status line (job_status.js): `node --test js/tests/`.
import assert from "node:assert/strict";
import { test } from "node:test";

import { jobLine } from "../job_status.js";

test("a running job counts its time from its start; an ended one stops counting and shows its message", () => {
  const job = { name: "learn", state: "running", started: 100, ended: 0, message: "" };
  assert.equal(jobLine(job, 112.4), "learn: running · 12 s");
  assert.equal(jobLine({ ...job, state: "failed", ended: 130, message: "ValueError" }, 500), "learn: failed · 30 s · ValueError");
  assert.equal(jobLine(job, 90), "learn: running · 0 s"); // a clock behind the kernel's: never negative
});
