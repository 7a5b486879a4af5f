// Bounds on the work the server takes on: a gate that lets a few jobs run at once and queues a few
// more (503 beyond that), and a deadline for one request's work (408 past it).

import { ApiError } from "./errors.js";

/** Lets `concurrency` jobs run at once and queues `maxQueued` more; a job beyond that is refused with a 503. */
export class Gate {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly name: string,
    readonly concurrency: number,
    readonly maxQueued: number,
  ) {}

  /** Jobs running now. */
  get running(): number {
    return this.active;
  }

  /** Runs `job` when a slot is free; refuses at once when the queue is full. */
  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) {
      if (this.waiting.length >= this.maxQueued) throw new ApiError(503, `too many ${this.name} requests at once; try again shortly`);
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else this.active++;
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }
}

/** `work`, or a 408 when it takes longer than `ms` (the work itself runs on; its result is dropped). */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ApiError(408, `${what} took longer than ${ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`}`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
