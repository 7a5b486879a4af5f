// Multinomial logistic regression (softmax over classes) on sparse feature vectors, trained by SGD
// with L2 regularization kept exact under sparse updates by Bottou's scale trick (W_true = s·W, the
// decay multiplies s only), learning rate η_t = η0 / (1 + η0·λ·t). Dense inputs are sparse inputs
// that list every index. Seeded and single-threaded, so a run is reproducible. docs/decisions.md.
import { seededRandom } from "../../util/random.js";

/** A sparse vector: parallel lists of feature indices and values. */
export interface SparseVector {
  idx: ArrayLike<number>;
  val: ArrayLike<number>;
}

export interface SoftmaxOptions {
  /** L2 strength λ (default 1e-5). */
  l2?: number;
  /** Initial learning rate η0 (default 0.5). */
  learningRate?: number;
}

export { seededRandom };

/** A multinomial logistic regression over sparse features, trained by SGD with L2 (the WikiReading baselines' classifier). */
export class SoftmaxRegression {
  /** Weights, feature-major: W[f * classes + c] (times `scale`). */
  readonly weights: Float32Array;
  readonly bias: Float64Array;
  scale = 1;
  /** SGD steps taken (drives the learning-rate schedule). */
  steps = 0;
  readonly l2: number;
  readonly learningRate: number;
  private readonly probs: Float64Array;

  constructor(
    readonly features: number,
    readonly classes: number,
    options: SoftmaxOptions = {},
  ) {
    if (!(features > 0 && classes > 1)) throw new Error("a softmax regression needs at least one feature and two classes");
    this.weights = new Float32Array(features * classes);
    this.bias = new Float64Array(classes);
    this.l2 = options.l2 ?? 1e-5;
    this.learningRate = options.learningRate ?? 0.5;
    this.probs = new Float64Array(classes);
  }

  /** Class scores (logits) of `x`. */
  logits(x: SparseVector, out: Float64Array = new Float64Array(this.classes)): Float64Array {
    const C = this.classes;
    out.set(this.bias);
    const s = this.scale;
    for (let k = 0; k < x.idx.length; k++) {
      const v = x.val[k] * s;
      if (v === 0) continue;
      const base = x.idx[k] * C;
      for (let c = 0; c < C; c++) out[c] += v * this.weights[base + c];
    }
    return out;
  }

  /** Class probabilities of `x` (softmax of the logits, computed stably). */
  probabilities(x: SparseVector, out: Float64Array = new Float64Array(this.classes)): Float64Array {
    this.logits(x, out);
    let max = -Infinity;
    for (let c = 0; c < out.length; c++) if (out[c] > max) max = out[c];
    let z = 0;
    for (let c = 0; c < out.length; c++) {
      out[c] = Math.exp(out[c] - max);
      z += out[c];
    }
    for (let c = 0; c < out.length; c++) out[c] /= z;
    return out;
  }

  /** The most probable class (the lowest index among ties). */
  predict(x: SparseVector): number {
    const l = this.logits(x, this.probs);
    let best = 0;
    for (let c = 1; c < l.length; c++) if (l[c] > l[best]) best = c;
    return best;
  }

  /** One SGD step on (x, y); returns the example's cross-entropy before the step. */
  step(x: SparseVector, y: number): number {
    const eta = this.learningRate / (1 + this.learningRate * this.l2 * this.steps);
    this.steps++;
    const p = this.probabilities(x, this.probs);
    const loss = -Math.log(Math.max(p[y], 1e-300));
    // L2 decay of every weight at once: W_true ← (1 − ηλ) W_true.
    this.scale *= 1 - eta * this.l2;
    if (this.scale < 1e-6) this.rescale();
    const C = this.classes;
    const g = eta / this.scale;
    for (let k = 0; k < x.idx.length; k++) {
      const v = x.val[k];
      if (v === 0) continue;
      const base = x.idx[k] * C;
      for (let c = 0; c < C; c++) {
        const d = p[c] - (c === y ? 1 : 0);
        this.weights[base + c] -= g * v * d;
      }
    }
    for (let c = 0; c < C; c++) this.bias[c] -= eta * (p[c] - (c === y ? 1 : 0));
    return loss;
  }

  /** Folds the scale into the weights. */
  rescale(): void {
    if (this.scale === 1) return;
    for (let i = 0; i < this.weights.length; i++) this.weights[i] *= this.scale;
    this.scale = 1;
  }

  /**
   * The regularized mean loss over a batch, L = mean(−log p_y) + λ/2·‖W‖², and its gradient with
   * respect to the (true, unscaled) weights and the biases. For tests and small problems.
   */
  lossAndGradient(batch: readonly { x: SparseVector; y: number }[]): { loss: number; gradW: Float64Array; gradB: Float64Array } {
    const C = this.classes;
    const gradW = new Float64Array(this.weights.length);
    const gradB = new Float64Array(C);
    let loss = 0;
    for (const { x, y } of batch) {
      const p = this.probabilities(x, new Float64Array(C));
      loss += -Math.log(p[y]);
      for (let k = 0; k < x.idx.length; k++)
        for (let c = 0; c < C; c++) gradW[x.idx[k] * C + c] += (x.val[k] * (p[c] - (c === y ? 1 : 0))) / batch.length;
      for (let c = 0; c < C; c++) gradB[c] += (p[c] - (c === y ? 1 : 0)) / batch.length;
    }
    loss /= batch.length;
    let sq = 0;
    for (let i = 0; i < this.weights.length; i++) {
      const w = this.weights[i] * this.scale;
      sq += w * w;
      gradW[i] += this.l2 * w;
    }
    return { loss: loss + (this.l2 / 2) * sq, gradW, gradB };
  }
}
