// Scores (probabilities summing to 1) to the 0-100 rank NIP-85 asks for, on a log scale relative
// to the average pubkey: rank = 100 · ln(1 + score·n) / ln(1 + max·n). A pubkey the roots cannot
// reach scores 0 and ranks 0; one with the average score ranks about 100·ln 2 / ln(1 + max·n).
export function rankScale(scores: Float64Array, n: number): (score: number) => number {
  let max = 0;
  for (let i = 0; i < n; i++) if (scores[i]! > max) max = scores[i]!;
  const top = Math.log1p(max * n);
  return top > 0 ? (s) => Math.max(0, Math.min(100, Math.round((100 * Math.log1p(s * n)) / top))) : () => 0;
}
