// Lucene 8.7 side of `npm run bench:retrieval`: indexes one text per line with BM25Similarity(k1, b)
// and the same analyzer as tartan, then runs the queries single-threaded as Pyserini does (bag of
// words: one SHOULD clause per distinct term, boosted by its count) and writes the top k per query.
// Lines are escaped: "\n" stands for a newline and "\\" for a backslash.
//
// usage: java Bm25Bench index  <english|lowercase> <docs.txt> <indexDir> <k1> <b>
//        java Bm25Bench search <english|lowercase> <indexDir> <queries.txt> <k> <repeats> <results.tsv> <k1> <b>
//        java Bm25Bench serve  <english|lowercase> <indexDir> <queries.txt> <k> <k1> <b>
//          (for timing in alternation with another engine: after a warm-up pass prints {"ready":true}, then
//          answers each "run" line on stdin with one timed pass over the queries as a JSON line; exits at EOF)
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.core.WhitespaceTokenizer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;
import java.lang.management.ManagementFactory;

public class Bm25Bench {
  static final String FIELD = "contents";

  /** CPU seconds of the whole JVM process (all threads: indexing, merges, JIT, GC). */
  static double cpu() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime() / 1e9;
  }

  static Analyzer analyzer(String name) {
    if (name.equals("english")) return new EnglishAnalyzer();
    if (name.equals("lowercase")) return new Analyzer() {
      protected TokenStreamComponents createComponents(String f) {
        Tokenizer t = new WhitespaceTokenizer();
        return new TokenStreamComponents(t, new LowerCaseFilter(t));
      }
    };
    throw new IllegalArgumentException(name);
  }

  static String unescape(String s) {
    if (s.indexOf('\\') < 0) return s;
    StringBuilder sb = new StringBuilder(s.length());
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 1 < s.length()) {
        char d = s.charAt(++i);
        sb.append(d == 'n' ? '\n' : d);
      } else sb.append(c);
    }
    return sb.toString();
  }

  static List<String> readLines(String file) throws IOException {
    List<String> out = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(Paths.get(file), StandardCharsets.UTF_8)) {
      for (String line; (line = r.readLine()) != null; ) out.add(unescape(line));
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("index")) index(args);
    else if (args[0].equals("serve")) serve(args);
    else search(args);
  }

  static void index(String[] a) throws Exception {
    Analyzer analyzer = analyzer(a[1]);
    double c0 = cpu();
    long t0 = System.nanoTime();
    IndexWriterConfig cfg = new IndexWriterConfig(analyzer);
    cfg.setSimilarity(new BM25Similarity(Float.parseFloat(a[4]), Float.parseFloat(a[5])));
    cfg.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    cfg.setRAMBufferSizeMB(2048);
    cfg.setUseCompoundFile(false);
    cfg.setMergePolicy(new LogByteSizeMergePolicy()); // merges keep document order
    FieldType type = new FieldType();
    type.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    type.setTokenized(true);
    type.freeze();
    int n = 0;
    try (IndexWriter w = new IndexWriter(FSDirectory.open(Paths.get(a[3])), cfg);
         BufferedReader r = Files.newBufferedReader(Paths.get(a[2]), StandardCharsets.UTF_8)) {
      Document doc = new Document();
      Field contents = new Field(FIELD, "", type);
      NumericDocValuesField id = new NumericDocValuesField("id", 0);
      doc.add(contents);
      doc.add(id);
      for (String line; (line = r.readLine()) != null; n++) {
        contents.setStringValue(unescape(line));
        id.setLongValue(n);
        w.addDocument(doc);
      }
      long t1 = System.nanoTime();
      w.forceMerge(1);
      w.commit();
      long t2 = System.nanoTime();
      double c2 = cpu();
      System.out.printf(Locale.ROOT, "{\"docs\":%d,\"indexSeconds\":%.3f,\"mergeSeconds\":%.3f,\"seconds\":%.3f,\"cpuSeconds\":%.3f}%n", n, (t1 - t0) / 1e9, (t2 - t1) / 1e9, (t2 - t0) / 1e9, c2 - c0);
    }
  }

  static Query query(Analyzer analyzer, String text) throws IOException {
    LinkedHashMap<String, Integer> counts = new LinkedHashMap<>();
    try (TokenStream ts = analyzer.tokenStream(FIELD, text)) {
      CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
      ts.reset();
      while (ts.incrementToken()) counts.merge(term.toString(), 1, Integer::sum);
      ts.end();
    }
    BooleanQuery.Builder b = new BooleanQuery.Builder();
    for (Map.Entry<String, Integer> e : counts.entrySet())
      b.add(new BoostQuery(new TermQuery(new Term(FIELD, e.getKey())), (float) e.getValue()), BooleanClause.Occur.SHOULD);
    return b.build();
  }

  static void search(String[] a) throws Exception {
    Analyzer analyzer = analyzer(a[1]);
    long t0 = System.nanoTime();
    DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(a[2])));
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new BM25Similarity(Float.parseFloat(a[7]), Float.parseFloat(a[8])));
    searcher.setQueryCache(null);
    double openSeconds = (System.nanoTime() - t0) / 1e9;
    List<String> queries = readLines(a[3]);
    int k = Integer.parseInt(a[4]);
    int repeats = Integer.parseInt(a[5]);
    TopDocs[] results = new TopDocs[queries.size()];
    for (int i = 0; i < queries.size(); i++) results[i] = searcher.search(query(analyzer, queries.get(i)), k); // warm-up
    double best = Double.MAX_VALUE;
    double bestCpu = Double.MAX_VALUE;
    for (int rep = 0; rep < repeats; rep++) {
      double c = cpu();
      long s = System.nanoTime();
      for (int i = 0; i < queries.size(); i++) results[i] = searcher.search(query(analyzer, queries.get(i)), k);
      best = Math.min(best, (System.nanoTime() - s) / 1e9);
      bestCpu = Math.min(bestCpu, cpu() - c);
    }
    // Lucene doc id → line number.
    int[] unit = new int[reader.maxDoc()];
    for (LeafReaderContext leaf : reader.leaves()) {
      NumericDocValues ids = leaf.reader().getNumericDocValues("id");
      for (int d = ids.nextDoc(); d != DocIdSetIterator.NO_MORE_DOCS; d = ids.nextDoc()) unit[leaf.docBase + d] = (int) ids.longValue();
    }
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(a[6]), StandardCharsets.UTF_8))) {
      for (int i = 0; i < results.length; i++) {
        StringBuilder sb = new StringBuilder();
        for (ScoreDoc sd : results[i].scoreDocs) {
          if (sb.length() > 0) sb.append(' ');
          sb.append(unit[sd.doc]).append(':').append(Float.toString(sd.score));
        }
        out.println(sb);
      }
    }
    long bytes = 0;
    for (Path p : Files.newDirectoryStream(Paths.get(a[2]))) bytes += Files.size(p);
    System.out.printf(Locale.ROOT, "{\"queries\":%d,\"seconds\":%.4f,\"qps\":%.1f,\"cpuSeconds\":%.4f,\"cpuQps\":%.1f,\"openSeconds\":%.3f,\"indexBytes\":%d,\"segments\":%d}%n",
        queries.size(), best, queries.size() / best, bestCpu, queries.size() / bestCpu, openSeconds, bytes, reader.leaves().size());
    reader.close();
  }

  static void serve(String[] a) throws Exception {
    Analyzer analyzer = analyzer(a[1]);
    DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(a[2])));
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new BM25Similarity(Float.parseFloat(a[5]), Float.parseFloat(a[6])));
    searcher.setQueryCache(null);
    List<String> queries = readLines(a[3]);
    int k = Integer.parseInt(a[4]);
    long hits = 0;
    for (String q : queries) hits += searcher.search(query(analyzer, q), k).scoreDocs.length; // warm-up
    System.out.printf(Locale.ROOT, "{\"ready\":true,\"hits\":%d}%n", hits);
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      if (!line.equals("run")) continue;
      double c = cpu();
      long s = System.nanoTime();
      for (String q : queries) hits += searcher.search(query(analyzer, q), k).scoreDocs.length;
      double seconds = (System.nanoTime() - s) / 1e9;
      System.out.printf(Locale.ROOT, "{\"seconds\":%.4f,\"cpuSeconds\":%.4f,\"hits\":%d}%n", seconds, cpu() - c, hits);
      System.out.flush();
    }
    reader.close();
  }
}
