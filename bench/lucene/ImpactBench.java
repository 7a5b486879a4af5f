// Lucene 8.7 side of `npm run bench:impact` (issue 38): an impact index as Anserini builds one for learned
// sparse models (SPLADE, uniCOIL), searched with Anserini's ImpactSimilarity and Lucene's block-max WAND.
// The collection is Anserini's JsonVectorCollection (JSONL {"id", "contents", "vector": {"term": weight}}),
// each weight quantized as tartan's `--scale S` does (Math.round(weight × S); impacts of 0 left out). A
// document's terms go in through a TokenStream that sets each term's TermFrequencyAttribute to its impact
// (Anserini's own route; the same postings as a text repeating each term impact times), into a field of
// docs and frequencies without norms. ImpactSimilarity scores a posting boost × freq: a query term's
// weight (a float, BoostQuery) times the impact. A query is one SHOULD clause per term of weight > 0, and
// is searched with TopScoreDocCollector.create(k, null, k) (total hits counted only up to k, so WAND skips
// blocks by their impacts from the first full top k). Ties go to the lower doc id; doc ids are the
// collection's line order (one segment after forceMerge(1); LogByteSizeMergePolicy keeps document order),
// and the "id" doc value maps them back to units.
//
// usage: java ImpactBench index  <collection.jsonl> <indexDir> <scale> [ramBufferMB]
//        java ImpactBench serve  <indexDir> <queries.jsonl>
//          (after a warm-up prints {"ready":true,…}; then answers stdin lines, each with one JSON line:
//            "run K THREADS"  one timed pass over the queries at depth K on THREADS threads
//            "dump K FILE"    the top K of every query as "unit:score …" lines into FILE
//            "rss"            this process's peak resident memory (VmHWM)
//           and exits at EOF)
import java.io.*;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.TermFrequencyAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.Similarity;
import org.apache.lucene.store.FSDirectory;

public class ImpactBench {
  static final String FIELD = "contents";

  /** CPU seconds of the whole JVM process (all threads: indexing, merges, JIT, GC). */
  static double cpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
  }

  /** Anserini's ImpactSimilarity: a posting scores the query term's boost times its frequency (the impact). */
  static final class ImpactSimilarity extends Similarity {
    @Override
    public long computeNorm(FieldInvertState state) {
      return 1;
    }

    @Override
    public SimScorer scorer(float boost, CollectionStatistics collectionStats, TermStatistics... termStats) {
      return new SimScorer() {
        @Override
        public float score(float freq, long norm) {
          return boost * freq;
        }
      };
    }
  }

  /** One document's terms, each once, with its impact as the term frequency. */
  static final class ImpactTokens extends TokenStream {
    final CharTermAttribute term = addAttribute(CharTermAttribute.class);
    final TermFrequencyAttribute freq = addAttribute(TermFrequencyAttribute.class);
    final List<String> terms = new ArrayList<>();
    int[] impacts = new int[256];
    int n;
    int at;

    void clear() {
      terms.clear();
      n = 0;
    }

    void add(String t, int impact) {
      if (n == impacts.length) impacts = Arrays.copyOf(impacts, n * 2);
      terms.add(t);
      impacts[n++] = impact;
    }

    @Override
    public boolean incrementToken() {
      if (at >= n) return false;
      clearAttributes();
      term.setEmpty().append(terms.get(at));
      freq.setTermFrequency(impacts[at]);
      at++;
      return true;
    }

    @Override
    public void reset() throws IOException {
      super.reset();
      at = 0;
    }
  }

  // ---------------------------------------------------------------------------------------------------
  // A small JSON reader for the collection's and the queries' lines (objects, strings, numbers, literals).

  static final class Json {
    final String s;
    final String where;
    int i;

    Json(String s, String where) {
      this.s = s;
      this.where = where;
    }

    RuntimeException fail(String why) {
      return new IllegalArgumentException(where + ": " + why + " at character " + i);
    }

    void ws() {
      while (i < s.length() && (s.charAt(i) == ' ' || s.charAt(i) == '\t' || s.charAt(i) == '\r' || s.charAt(i) == '\n')) i++;
    }

    void expect(char c) {
      ws();
      if (i >= s.length() || s.charAt(i) != c) throw fail("expected '" + c + "'");
      i++;
    }

    boolean peek(char c) {
      ws();
      return i < s.length() && s.charAt(i) == c;
    }

    String string() {
      expect('"');
      StringBuilder sb = null;
      int start = i;
      while (true) {
        if (i >= s.length()) throw fail("unterminated string");
        char c = s.charAt(i);
        if (c == '"') break;
        if (c == '\\') {
          if (sb == null) sb = new StringBuilder();
          sb.append(s, start, i);
          char d = s.charAt(++i);
          switch (d) {
            case 'n': sb.append('\n'); break;
            case 't': sb.append('\t'); break;
            case 'r': sb.append('\r'); break;
            case 'b': sb.append('\b'); break;
            case 'f': sb.append('\f'); break;
            case 'u': sb.append((char) Integer.parseInt(s.substring(i + 1, i + 5), 16)); i += 4; break;
            default: sb.append(d);
          }
          start = ++i;
          continue;
        }
        i++;
      }
      String out = sb == null ? s.substring(start, i) : sb.append(s, start, i).toString();
      i++;
      return out;
    }

    double number() {
      ws();
      int start = i;
      while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
      if (start == i) throw fail("expected a number");
      return Double.parseDouble(s.substring(start, i));
    }

    /** Skips any value. */
    void skip() {
      ws();
      char c = s.charAt(i);
      if (c == '"') string();
      else if (c == '{') { object((k, j) -> j.skip()); }
      else if (c == '[') {
        i++;
        if (!peek(']')) do skip(); while (comma());
        expect(']');
      } else if (c == 't' || c == 'f' || c == 'n') { while (i < s.length() && Character.isLetter(s.charAt(i))) i++; }
      else number();
    }

    boolean comma() {
      if (peek(',')) { i++; return true; }
      return false;
    }

    interface Member { void read(String key, Json j); }

    void object(Member m) {
      expect('{');
      if (!peek('}')) do { String k = string(); expect(':'); m.read(k, this); } while (comma());
      expect('}');
    }

    /** The value as a string: a string's text or a number's digits. */
    String scalar() {
      if (peek('"')) return string();
      int start = i;
      number();
      return s.substring(start, i);
    }
  }

  static final class Line {
    String id;
    final LinkedHashMap<String, Double> vector = new LinkedHashMap<>();
  }

  static Line parse(String text, String where) {
    Line l = new Line();
    Json j = new Json(text, where);
    j.object((k, jj) -> {
      if (k.equals("id")) l.id = jj.scalar();
      else if (k.equals("vector")) jj.object((t, v) -> l.vector.put(t, v.number()));
      else jj.skip();
    });
    if (l.id == null) throw new IllegalArgumentException(where + ": field id: missing");
    return l;
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("index")) index(args);
    else if (args[0].equals("serve")) serve(args);
    else throw new IllegalArgumentException("usage: ImpactBench index|serve …");
  }

  static void index(String[] a) throws Exception {
    Path collection = Paths.get(a[1]);
    double scale = Double.parseDouble(a[3]);
    double ram = a.length > 4 ? Double.parseDouble(a[4]) : 1024;
    double c0 = cpu();
    long t0 = System.nanoTime();
    IndexWriterConfig cfg = new IndexWriterConfig(null);
    cfg.setSimilarity(new ImpactSimilarity());
    cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    cfg.setRAMBufferSizeMB(ram);
    cfg.setUseCompoundFile(false);
    cfg.setMergePolicy(new LogByteSizeMergePolicy()); // merges keep document order
    FieldType type = new FieldType();
    type.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    type.setTokenized(true);
    type.setOmitNorms(true);
    type.freeze();
    int n = 0;
    long postings = 0;
    long sumImpacts = 0;
    try (IndexWriter w = new IndexWriter(FSDirectory.open(Paths.get(a[2])), cfg);
         BufferedReader r = Files.newBufferedReader(collection, StandardCharsets.UTF_8)) {
      ImpactTokens tokens = new ImpactTokens();
      Document doc = new Document();
      Field contents = new Field(FIELD, tokens, type);
      NumericDocValuesField id = new NumericDocValuesField("id", 0);
      doc.add(contents);
      doc.add(id);
      for (String line; (line = r.readLine()) != null; ) {
        n++;
        if (line.isEmpty()) continue;
        Line l = parse(line, collection + ":" + n);
        tokens.clear();
        for (Map.Entry<String, Double> e : l.vector.entrySet()) {
          long impact = Math.round(e.getValue() * scale);
          if (impact == 0) continue;
          if (impact > Integer.MAX_VALUE) throw new IllegalArgumentException(collection + ":" + n + ": field vector[" + e.getKey() + "]: impact " + impact + " too large");
          tokens.add(e.getKey(), (int) impact);
          postings++;
          sumImpacts += impact;
        }
        id.setLongValue(Long.parseLong(l.id));
        w.addDocument(doc);
      }
      long t1 = System.nanoTime();
      w.forceMerge(1);
      w.commit();
      long t2 = System.nanoTime();
      System.out.printf(Locale.ROOT, "{\"docs\":%d,\"postings\":%d,\"sumImpacts\":%d,\"indexSeconds\":%.3f,\"mergeSeconds\":%.3f,\"seconds\":%.3f,\"cpuSeconds\":%.3f}%n",
          n, postings, sumImpacts, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t2 - t0) / 1e9, cpu() - c0);
    }
  }

  static List<Query> readQueries(Path file) throws IOException {
    List<Query> out = new ArrayList<>();
    int n = 0;
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      for (String line; (line = r.readLine()) != null; ) {
        n++;
        if (line.isEmpty()) continue;
        Line l = parse(line, file + ":" + n);
        BooleanQuery.Builder b = new BooleanQuery.Builder();
        for (Map.Entry<String, Double> e : l.vector.entrySet()) {
          float weight = (float) (double) e.getValue();
          if (!(weight > 0)) continue;
          b.add(new BoostQuery(new TermQuery(new Term(FIELD, e.getKey())), weight), BooleanClause.Occur.SHOULD);
        }
        out.add(b.build());
      }
    }
    return out;
  }

  static TopDocs top(IndexSearcher searcher, Query q, int k) throws IOException {
    TopScoreDocCollector c = TopScoreDocCollector.create(k, null, k);
    searcher.search(q, c);
    return c.topDocs();
  }

  static long peakRssKiB() throws IOException {
    for (String l : Files.readAllLines(Paths.get("/proc/self/status")))
      if (l.startsWith("VmHWM:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
    return -1;
  }

  static void serve(String[] a) throws Exception {
    long t0 = System.nanoTime();
    DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(a[1])));
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new ImpactSimilarity());
    searcher.setQueryCache(null);
    double openSeconds = (System.nanoTime() - t0) / 1e9;
    List<Query> queries = readQueries(Paths.get(a[2]));
    int[] unit = new int[reader.maxDoc()];
    for (LeafReaderContext leaf : reader.leaves()) {
      NumericDocValues ids = leaf.reader().getNumericDocValues("id");
      for (int d = ids.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = ids.nextDoc()) unit[leaf.docBase + d] = (int) ids.longValue();
    }
    long hits = 0;
    // Warm-up: three passes at each depth (then the JIT has compiled the search), on one thread.
    for (int k : new int[] {10, 100, 1000}) for (int r = 0; r < 3; r++) for (Query q : queries) hits += top(searcher, q, k).scoreDocs.length;
    long bytes = 0;
    try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get(a[1]))) {
      for (Path p : ds) bytes += Files.size(p);
    }
    System.out.printf(Locale.ROOT, "{\"ready\":true,\"queries\":%d,\"hits\":%d,\"openSeconds\":%.3f,\"indexBytes\":%d,\"segments\":%d}%n", queries.size(), hits, openSeconds, bytes, reader.leaves().size());
    System.out.flush();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] cmd = line.trim().split(" ");
      if (cmd[0].equals("run")) {
        int k = Integer.parseInt(cmd[1]);
        int threads = Integer.parseInt(cmd[2]);
        double c = cpu();
        long s = System.nanoTime();
        AtomicInteger next = new AtomicInteger();
        List<Future<Long>> parts = new ArrayList<>();
        for (int t = 0; t < threads; t++)
          parts.add(pool.submit(() -> {
            long h = 0;
            for (int i; (i = next.getAndIncrement()) < queries.size(); ) h += top(searcher, queries.get(i), k).scoreDocs.length;
            return h;
          }));
        long h = 0;
        for (Future<Long> f : parts) h += f.get();
        double seconds = (System.nanoTime() - s) / 1e9;
        System.out.printf(Locale.ROOT, "{\"seconds\":%.4f,\"cpuSeconds\":%.4f,\"hits\":%d}%n", seconds, cpu() - c, h);
      } else if (cmd[0].equals("dump")) {
        int k = Integer.parseInt(cmd[1]);
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(cmd[2]), StandardCharsets.UTF_8))) {
          for (Query q : queries) {
            StringBuilder sb = new StringBuilder();
            for (ScoreDoc sd : top(searcher, q, k).scoreDocs) {
              if (sb.length() > 0) sb.append(' ');
              sb.append(unit[sd.doc]).append(':').append(Float.toString(sd.score));
            }
            out.println(sb);
          }
        }
        System.out.println("{\"dumped\":true}");
      } else if (cmd[0].equals("rss")) {
        System.out.printf(Locale.ROOT, "{\"peakRssKiB\":%d}%n", peakRssKiB());
      }
      System.out.flush();
    }
    pool.shutdown();
    reader.close();
  }
}
