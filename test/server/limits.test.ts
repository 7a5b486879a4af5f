// The gate that bounds concurrent evaluations and batch searches, and the request deadline.

import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/server/errors.js";
import { Gate, withDeadline } from "../../src/server/limits.js";

const later = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe("Gate", () => {
  it("runs at most `concurrency` jobs at once, queues up to `maxQueued`, refuses beyond with a 503", async () => {
    const gate = new Gate("evaluation", 2, 1);
    let running = 0;
    let peak = 0;
    const job = async () => {
      running++;
      peak = Math.max(peak, running);
      await later(30);
      running--;
      return running;
    };
    const a = gate.run(job);
    const b = gate.run(job);
    const c = gate.run(job); // queued
    const d = gate.run(job); // refused
    await expect(d).rejects.toEqual(new ApiError(503, "too many evaluation requests at once; try again shortly"));
    await Promise.all([a, b, c]);
    expect(peak).toBe(2);
    expect(gate.running).toBe(0);
    // A failing job frees its slot.
    await expect(gate.run(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(gate.running).toBe(0);
    expect(await gate.run(async () => 7)).toBe(7);
  });
});

describe("withDeadline", () => {
  it("passes a result through, or gives a 408 when the work is too slow", async () => {
    expect(await withDeadline(Promise.resolve(3), 100, "x")).toBe(3);
    await expect(withDeadline(later(200), 20, "the search")).rejects.toEqual(new ApiError(408, "the search took longer than 20 ms"));
  });
});
