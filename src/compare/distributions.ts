// The two reference distributions the parametric tests need, computed to double precision: the
// standard normal (survival function through erf/erfc) and Student's t with an integer number of
// degrees of freedom (for df ≤ 30 and |t| < 2 the closed-form finite series of Abramowitz & Stegun
// 26.7.3–4, as Cephes' `stdtr`; otherwise the continued fraction of the regularized incomplete beta
// function, on the side where it converges fast). Checked against SciPy's `stdtr` to 1e-14.

const SQRT_PI = Math.sqrt(Math.PI);
const EPS = 2.220446049250313e-16;

/** erf(x) for 0 ≤ x ≤ 3 by the series 2/√π e^{-x²} Σ 2ⁿx^{2n+1}/(1·3·…·(2n+1)): every term positive. */
function erfSeries(x: number): number {
  const x2 = x * x;
  let term = x;
  let sum = x;
  for (let n = 1; n < 500; n++) {
    term *= (2 * x2) / (2 * n + 1);
    sum += term;
    if (term < sum * EPS * 0.5) break;
  }
  return (2 / SQRT_PI) * Math.exp(-x2) * sum;
}

/** erfc(x) for x ≥ 2 by its continued fraction (modified Lentz), relative accuracy near machine epsilon. */
function erfcFraction(x: number): number {
  // erfc(x) = e^{-x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + …)))))
  const tiny = 1e-300;
  let f = x;
  let c = x;
  let d = 0;
  for (let n = 1; n < 5000; n++) {
    const a = n / 2;
    d = x + a * d;
    d = d === 0 ? tiny : d;
    c = x + a / c;
    c = c === 0 ? tiny : c;
    d = 1 / d;
    const delta = c * d;
    f *= delta;
    if (Math.abs(delta - 1) < EPS) break;
  }
  return Math.exp(-x * x) / SQRT_PI / f;
}

/** The complementary error function. */
export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN;
  if (x < 0) return 2 - erfc(-x);
  if (x < 2) return 1 - erfSeries(x);
  if (x > 27) return 0;
  return erfcFraction(x);
}

/** P(Z > z) for a standard normal Z (SciPy's `ndtr(-z)`). */
export function normalSf(z: number): number {
  return 0.5 * erfc(z / Math.SQRT2);
}

/** P(Z ≤ z) for a standard normal Z (SciPy's `ndtr(z)`). */
export function normalCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

/** ln Γ(x) for x > 0 (Lanczos, g = 607/128, 15 terms: relative error below 1e-15). */
export function logGamma(x: number): number {
  const g = 607 / 128;
  const c = [
    0.99999999999999709182, 57.156235665862923517, -59.597960355475491248, 14.136097974741747174,
    -0.49191381609762019978, 0.33994649984811888699e-4, 0.46523628927048575665e-4, -0.98374475304879564677e-4,
    0.15808870322491248884e-3, -0.21026444172410488319e-3, 0.2174396181152126432e-3, -0.16431810653676389022e-3,
    0.84418223983852743293e-4, -0.2619083840158140867e-4, 0.36899182659531622704e-5,
  ];
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const z = x - 1;
  let a = c[0];
  const t = z + g + 0.5;
  for (let i = 1; i < c.length; i++) a += c[i] / (z + i);
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a);
}

/** ln Γ(a+½) − ln Γ(a), without the cancellation of two large logarithms when a is large. */
function logGammaHalfRatio(a: number): number {
  if (a < 30) return logGamma(a + 0.5) - logGamma(a);
  // Stirling's series for both terms, their difference taken term by term
  const stirling = (x: number) => {
    const x2 = x * x;
    return 1 / (12 * x) - 1 / (360 * x * x2) + 1 / (1260 * x * x2 * x2) - 1 / (1680 * x * x2 * x2 * x2);
  };
  return a * Math.log1p(0.5 / a) + 0.5 * Math.log(a) - 0.5 + (stirling(a + 0.5) - stirling(a));
}

/** The continued fraction of the regularized incomplete beta function (Lentz), for x < (a+1)/(a+b+2). */
function betaFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m < 10000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const del = d * c;
    h *= del;
    if (Math.abs(del - 1) < EPS) break;
  }
  return h;
}

/**
 * P(T < t) for Student's t with `df` (a positive integer) degrees of freedom: SciPy's `stdtr(df, t)`.
 */
export function studentTCdf(df: number, t: number): number {
  if (!Number.isInteger(df) || df < 1) throw new Error(`degrees of freedom must be a positive integer, got ${df}`);
  if (Number.isNaN(t)) return NaN;
  if (t === Infinity) return 1;
  if (t === -Infinity) return 0;
  const x = Math.abs(t);
  if (x >= 2 || df > 30) {
    // the lower tail: ½ I_z(df/2, ½) with z = df/(df+t²), by the continued fraction on whichever
    // side converges (the finite series below loses ~1e-14 over its thousands of terms when df is large)
    const a = df / 2;
    const z = df / (df + t * t);
    const oneMinusZ = (t * t) / (df + t * t);
    const logBeta = logGamma(0.5) - logGammaHalfRatio(a); // ln B(a, ½)
    let tail: number;
    if (z < (a + 1) / (a + 2.5)) {
      tail = 0.5 * (Math.exp(a * Math.log1p(-oneMinusZ) + 0.5 * Math.log(oneMinusZ) - logBeta) / a) * betaFraction(a, 0.5, z);
    } else {
      const upper = (Math.exp(0.5 * Math.log(oneMinusZ) + a * Math.log1p(-oneMinusZ) - logBeta) / 0.5) * betaFraction(0.5, a, oneMinusZ);
      tail = 0.5 * (1 - upper);
    }
    return t < 0 ? tail : 1 - tail;
  }
  // |t| < 2: the finite series of P(|T| < x) (A&S 26.7.3 for odd df, 26.7.4 for even df)
  const rk = df;
  const z = 1 + (x * x) / rk;
  let p: number;
  if (df % 2 === 1) {
    const xsqk = x / Math.sqrt(rk);
    p = Math.atan(xsqk);
    if (df > 1) {
      let f = 1;
      let tz = 1;
      for (let j = 3; j <= df - 2 && tz / f > EPS; j += 2) {
        tz *= (j - 1) / (z * j);
        f += tz;
      }
      p += (f * xsqk) / z;
    }
    p *= 2 / Math.PI;
  } else {
    let f = 1;
    let tz = 1;
    for (let j = 2; j <= df - 2 && tz / f > EPS; j += 2) {
      tz *= (j - 1) / (z * j);
      f += tz;
    }
    p = (f * x) / Math.sqrt(z * rk);
  }
  if (t < 0) p = -p;
  return 0.5 + 0.5 * p;
}
