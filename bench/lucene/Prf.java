// Pseudo-relevance feedback on Lucene 8's API, written from Anserini's published description (its
// Rm3Reranker, RocchioReranker and FeatureVector): the reference tartan's RM3 and Rocchio
// (src/retrieval/feedback/) are tested against (test/retrieval/bm25/feedback-lucene.test.ts) and
// benchmarked beside (bench/prf.mjs). It indexes one text per line (a line's number is its document,
// "\n" escaped as in Bm25Bench) with stored term vectors and BM25Similarity(k1, b), then for each query
// runs Anserini's first stage (a bag of words, one SHOULD clause per distinct term boosted by its count,
// the top `hits`), builds the expansion from the feedback documents' stored term vectors, and searches
// the expanded query (one BoostQuery per term). Ties by lower document, as Anserini's BREAK_SCORE_TIES_BY_DOCID.
//
// usage: java Prf <english|lowercase> <docs.txt> <queries.txt> <k> <k1> <b> <out.jsonl> rm3 <fbDocs> <fbTerms> <originalQueryWeight> <filterTerms>
//        java Prf <english|lowercase> <docs.txt> <queries.txt> <k> <k1> <b> <out.jsonl> rocchio <topFbTerms> <topFbDocs> <bottomFbTerms> <bottomFbDocs> <alpha> <beta> <gamma> <useNegative> <hits>
//        (out: one JSON line per query, {"terms":[[term, weight], …] best first, "hits":[[doc, score], …]};
//         stdout: {"queries", "seconds", "cpuSeconds"} of the searches, first stage and feedback)
import java.io.*;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.ByteBuffersDirectory;
import org.apache.lucene.util.BytesRef;

public class Prf {
  static final String FIELD = "contents";

  /** Anserini's FeatureVector: term → float, in a hash map; pruning and norms as it computes them. */
  static final class Vec {
    Map<String, Float> features = new HashMap<>();

    void add(String t, float v) { features.put(t, features.getOrDefault(t, 0.0f) + v); }
    float get(String t) { return features.getOrDefault(t, 0.0f); }

    List<Map.Entry<String, Float>> ordered() {
      List<Map.Entry<String, Float>> pairs = new ArrayList<>(features.entrySet());
      pairs.sort((x, y) -> {
        float a = x.getValue(), b = y.getValue();
        if (a == b) return x.getKey().compareTo(y.getKey());
        return a > b ? -1 : 1;
      });
      return pairs;
    }

    Vec prune(int k) {
      Map<String, Float> pruned = new HashMap<>();
      for (Map.Entry<String, Float> e : ordered()) {
        pruned.put(e.getKey(), e.getValue());
        if (pruned.size() >= k) break;
      }
      features = pruned;
      return this;
    }

    double l1() { double n = 0; for (float v : features.values()) n += Math.abs(v); return n; }
    double l2() { double n = 0; for (float v : features.values()) n += Math.pow(v, 2.0); return Math.sqrt(n); }

    Vec scale(double norm) {
      for (Map.Entry<String, Float> e : features.entrySet()) e.setValue((float) (e.getValue() / norm));
      return this;
    }

    static Vec fromTerms(List<String> terms) { Vec v = new Vec(); for (String t : terms) v.add(t, 1.0f); return v; }
  }

  static double cpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
  }

  static List<String> analyze(Analyzer analyzer, String text) throws IOException {
    List<String> out = new ArrayList<>();
    try (TokenStream ts = analyzer.tokenStream(FIELD, text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) out.add(term.toString());
      ts.end();
    }
    return out;
  }

  /** Anserini's first-stage bag of words (Pyserini's: one clause per distinct term, boost = count). */
  static Query bagOfWords(List<String> tokens) {
    LinkedHashMap<String, Integer> counts = new LinkedHashMap<>();
    for (String t : tokens) counts.merge(t, 1, Integer::sum);
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Map.Entry<String, Integer> e : counts.entrySet()) b.add(new BoostQuery(new TermQuery(new Term(FIELD, e.getKey())), (float) e.getValue()), BooleanClause.Occur.SHOULD);
    return b.build();
  }

  static Query weighted(Vec v) {
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Map.Entry<String, Float> e : v.features.entrySet()) b.add(new BoostQuery(new TermQuery(new Term(FIELD, e.getKey())), e.getValue()), BooleanClause.Occur.SHOULD);
    return b.build();
  }

  /** A feedback document's vector from its stored term vector: 2–20 characters, [a-z0-9] when asked, df ≤ 10%. */
  static Vec docVector(IndexReader reader, int doc, boolean alnum) throws IOException {
    Vec f = new Vec();
    Terms terms = reader.getTermVector(doc, FIELD);
    if (terms == null) return f;
    int numDocs = reader.numDocs();
    TermsEnum te = terms.iterator();
    for (BytesRef text; (text = te.next()) != null; ) {
      String term = text.utf8ToString();
      if (term.length() < 2 || term.length() > 20) continue;
      if (alnum && !term.matches("[a-z0-9]+")) continue;
      int df = reader.docFreq(new Term(FIELD, term));
      float ratio = (float) df / numDocs;
      if (ratio > 0.1f) continue;
      f.add(term, (float) te.totalTermFreq());
    }
    return f;
  }

  static Vec rm3(IndexReader reader, ScoreDoc[] docs, List<String> tokens, int fbDocs, int fbTerms, float originalQueryWeight, boolean filterTerms) throws IOException {
    Vec qfv = Vec.fromTerms(tokens);
    qfv.scale(qfv.l1());
    int numdocs = Math.min(docs.length, fbDocs);
    Set<String> vocab = new HashSet<>();
    List<Vec> vectors = new ArrayList<>();
    List<Float> scores = new ArrayList<>();
    for (int i = 0; i < numdocs; i++) {
      Vec v = docVector(reader, docs[i].doc, filterTerms).prune(fbTerms);
      vocab.addAll(v.features.keySet());
      vectors.add(v);
      scores.add(docs[i].score);
    }
    float[] norms = new float[vectors.size()];
    for (int i = 0; i < vectors.size(); i++) norms[i] = (float) vectors.get(i).l1();
    Vec rm = new Vec();
    for (String term : vocab) {
      float w = 0.0f;
      for (int i = 0; i < vectors.size(); i++) if (norms[i] > 0.001f) w += (vectors.get(i).get(term) / norms[i]) * scores.get(i);
      rm.add(term, w);
    }
    rm.prune(fbTerms);
    rm.scale(rm.l1());
    Vec z = new Vec();
    Set<String> all = new HashSet<>(qfv.features.keySet());
    all.addAll(rm.features.keySet());
    for (String t : all) z.add(t, (float) (originalQueryWeight * qfv.get(t) + (1.0 - originalQueryWeight) * rm.get(t)));
    return z;
  }

  static Vec mean(IndexReader reader, List<Integer> docs, int fbTerms) throws IOException {
    Set<String> vocab = new HashSet<>();
    List<Vec> vectors = new ArrayList<>();
    for (int d : docs) {
      Vec v = docVector(reader, d, false);
      vocab.addAll(v.features.keySet());
      vectors.add(v);
    }
    float[] norms = new float[vectors.size()];
    for (int i = 0; i < vectors.size(); i++) norms[i] = (float) vectors.get(i).l2();
    Vec f = new Vec();
    for (String term : vocab) {
      float w = 0.0f;
      for (int i = 0; i < vectors.size(); i++) if (norms[i] > 0.001f) w += vectors.get(i).get(term) / norms[i];
      f.add(term, w / vectors.size());
    }
    f.prune(fbTerms);
    f.scale(f.l2());
    return f;
  }

  static Vec rocchio(IndexReader reader, ScoreDoc[] docs, List<String> tokens, int topFbTerms, int topFbDocs, int bottomFbTerms, int bottomFbDocs, float alpha, float beta, float gamma, boolean useNegative) throws IOException {
    Vec q = Vec.fromTerms(tokens);
    q.scale(q.l2());
    List<Integer> top = new ArrayList<>();
    for (int i = 0; i < Math.min(docs.length, topFbDocs); i++) top.add(docs[i].doc);
    Vec a = mean(reader, top, topFbTerms);
    Vec c = new Vec();
    if (useNegative) {
      List<Integer> bottom = new ArrayList<>();
      for (int i = 0; i < Math.min(docs.length, bottomFbDocs); i++) bottom.add(docs[docs.length - i - 1].doc);
      c = mean(reader, bottom, bottomFbTerms);
    }
    Vec z = new Vec();
    Set<String> all = new HashSet<>(q.features.keySet());
    all.addAll(a.features.keySet());
    all.addAll(c.features.keySet());
    for (String t : all) {
      float w = alpha * q.get(t) + beta * a.get(t) - gamma * c.get(t);
      if (w > 0) z.add(t, w);
    }
    return z;
  }

  static String json(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (int i = 0; i < s.length(); i++) {
      char ch = s.charAt(i);
      if (ch == '"' || ch == '\\') sb.append('\\').append(ch);
      else if (ch < 0x20) sb.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
      else sb.append(ch);
    }
    return sb.append('"').toString();
  }

  public static void main(String[] a) throws Exception {
    Analyzer analyzer = Bm25Bench.analyzer(a[0]);
    List<String> docs = Bm25Bench.readLines(a[1]);
    List<String> queries = Bm25Bench.readLines(a[2]);
    int k = Integer.parseInt(a[3]);
    BM25Similarity sim = new BM25Similarity(Float.parseFloat(a[4]), Float.parseFloat(a[5]));
    String method = a[7];
    ByteBuffersDirectory dir = new ByteBuffersDirectory();
    IndexWriterConfig cfg = new IndexWriterConfig(analyzer);
    cfg.setSimilarity(sim);
    cfg.setMergePolicy(new LogByteSizeMergePolicy()); // merges keep document order: document = line
    FieldType type = new FieldType();
    type.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    type.setTokenized(true);
    type.setStoreTermVectors(true); // Anserini's -storeDocvectors
    type.freeze();
    try (IndexWriter w = new IndexWriter(dir, cfg)) {
      for (String d : docs) {
        Document doc = new Document();
        doc.add(new Field(FIELD, d, type));
        w.addDocument(doc);
      }
      w.forceMerge(1);
    }
    DirectoryReader reader = DirectoryReader.open(dir);
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(sim);
    searcher.setQueryCache(null);
    double c0 = cpu();
    long t0 = System.nanoTime();
    List<String> lines = new ArrayList<>();
    for (String text : queries) {
      List<String> tokens = analyze(analyzer, text);
      Vec expanded;
      if (method.equals("rm3")) {
        int fbDocs = Integer.parseInt(a[8]);
        ScoreDoc[] first = searcher.search(bagOfWords(tokens), fbDocs).scoreDocs;
        expanded = rm3(reader, first, tokens, fbDocs, Integer.parseInt(a[9]), Float.parseFloat(a[10]), Boolean.parseBoolean(a[11]));
      } else {
        boolean useNegative = Boolean.parseBoolean(a[15]);
        int topFbDocs = Integer.parseInt(a[9]);
        ScoreDoc[] first = searcher.search(bagOfWords(tokens), useNegative ? Integer.parseInt(a[16]) : topFbDocs).scoreDocs;
        expanded = rocchio(reader, first, tokens, Integer.parseInt(a[8]), topFbDocs, Integer.parseInt(a[10]), Integer.parseInt(a[11]), Float.parseFloat(a[12]), Float.parseFloat(a[13]), useNegative ? Float.parseFloat(a[14]) : 0f, useNegative);
      }
      ScoreDoc[] hits = expanded.features.isEmpty() ? new ScoreDoc[0] : searcher.search(weighted(expanded), k).scoreDocs;
      StringBuilder sb = new StringBuilder("{\"terms\":[");
      boolean firstTerm = true;
      for (Map.Entry<String, Float> e : expanded.ordered()) {
        if (!firstTerm) sb.append(',');
        firstTerm = false;
        sb.append('[').append(json(e.getKey())).append(',').append(Float.toString(e.getValue())).append(']');
      }
      sb.append("],\"hits\":[");
      for (int i = 0; i < hits.length; i++) {
        if (i > 0) sb.append(',');
        sb.append('[').append(hits[i].doc).append(',').append(Float.toString(hits[i].score)).append(']');
      }
      lines.add(sb.append("]}").toString());
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    double cpuSeconds = cpu() - c0;
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(a[6]), StandardCharsets.UTF_8))) {
      for (String l : lines) out.println(l);
    }
    System.out.printf(Locale.ROOT, "{\"queries\":%d,\"seconds\":%.4f,\"cpuSeconds\":%.4f}%n", queries.size(), seconds, cpuSeconds);
    reader.close();
  }
}
