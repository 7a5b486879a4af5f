// Lucene 8.7 side of `npm run bench:live-lucene` (issue 40): a sequence of page updates applied to an IndexWriter
// with the BM25 bench's analysis (./Bm25Bench.java: EnglishAnalyzer or lowercase, docs and frequencies,
// BM25Similarity(k1, b)), committed every M operations; update throughput; optionally forceMerge(1); then
// the top k of a query file.
//
// Operations, one JSON line each (bench/live-gen.mjs writes them; bench/live-lucene.mjs cuts pages into units):
//   {"op": "add"|"replace"|"delete", "id": PAGE, "units": [{"id": UNIT, "text": TEXT}, …]}
// A page is a group of documents sharing the "page" term: "add" adds its units, "replace" swaps all the
// page's documents for its units in one updateDocuments call (deletes by the page term, then adds), and
// "delete" deletes them (units are not read). A page of no units (a page with no text) adds nothing, and
// replacing a page by one deletes it. {"op", "id", "text"} is a page of one unit whose id is the
// page's. Every document stores its unit id as doc values, for the rankings.
//
// usage: java LiveBench apply  <english|lowercase> <indexDir> <ops.jsonl> <commitEvery> <create|append> <k1> <b> [forceMerge]
//          (prints one JSON line: operations by kind, documents added and deleted, commits, wall and CPU
//           seconds, operations and documents a second; with forceMerge, the merge's own time after it)
//        java LiveBench merge  <indexDir>
//          (forceMerge(1) and a commit; prints the merge's wall and CPU seconds and the segments before)
//        java LiveBench search <english|lowercase> <indexDir> <queries.txt> <k> <results.tsv> <k1> <b>
//          (one "UNIT:score …" line per query, UNIT the unit id, best first; ties to the lower doc id.
//           Queries are one escaped line each, as Bm25Bench reads them, searched as Bm25Bench does.)
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.document.*;
import org.apache.lucene.index.*;
import org.apache.lucene.search.*;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.util.BytesRef;

public class LiveBench {
  static final String FIELD = Bm25Bench.FIELD;

  static final class Op {
    String op;
    String id;
    final List<String[]> units = new ArrayList<>();
  }

  static Op parseOp(String text, String where) {
    Op o = new Op();
    String[] single = new String[1];
    ImpactBench.Json j = new ImpactBench.Json(text, where);
    j.object((k, v) -> {
      switch (k) {
        case "op": o.op = v.string(); break;
        case "id": o.id = v.scalar(); break;
        case "text": single[0] = v.string(); break;
        case "units":
          v.expect('[');
          if (!v.peek(']')) do {
            String[] u = new String[2];
            v.object((uk, uv) -> {
              if (uk.equals("id")) u[0] = uv.scalar();
              else if (uk.equals("text")) u[1] = uv.string();
              else uv.skip();
            });
            if (u[0] == null || u[1] == null) throw new IllegalArgumentException(where + ": field units: a unit without id or text");
            o.units.add(u);
          } while (v.comma());
          v.expect(']');
          break;
        default: v.skip();
      }
    });
    if (o.op == null || !(o.op.equals("add") || o.op.equals("replace") || o.op.equals("delete"))) throw new IllegalArgumentException(where + ": field op: expected add, replace or delete, found " + o.op);
    if (o.id == null) throw new IllegalArgumentException(where + ": field id: missing");
    if (single[0] != null) o.units.add(new String[] {o.id, single[0]});
    return o;
  }

  static FieldType contentsType() {
    FieldType type = new FieldType();
    type.setIndexOptions(IndexOptions.DOCS_AND_FREQS);
    type.setTokenized(true);
    type.freeze();
    return type;
  }

  static List<Document> docs(Op o, FieldType type) {
    List<Document> out = new ArrayList<>(o.units.size());
    for (String[] u : o.units) {
      Document d = new Document();
      d.add(new StringField("page", o.id, Field.Store.NO));
      d.add(new BinaryDocValuesField("unit", new BytesRef(u[0])));
      d.add(new Field(FIELD, u[1], type));
      out.add(d);
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    if (args[0].equals("apply")) apply(args);
    else if (args[0].equals("merge")) merge(args);
    else if (args[0].equals("search")) search(args);
    else throw new IllegalArgumentException("usage: LiveBench apply|search …");
  }

  static void apply(String[] a) throws Exception {
    Analyzer analyzer = Bm25Bench.analyzer(a[1]);
    Path opsFile = Paths.get(a[3]);
    int every = Integer.parseInt(a[4]);
    boolean create = a[5].equals("create");
    boolean merge = a.length > 8 && a[8].equals("forceMerge");
    IndexWriterConfig cfg = new IndexWriterConfig(analyzer);
    cfg.setSimilarity(new BM25Similarity(Float.parseFloat(a[6]), Float.parseFloat(a[7])));
    cfg.setOpenMode(create ? IndexWriterConfig.OpenMode.CREATE : IndexWriterConfig.OpenMode.APPEND);
    cfg.setRAMBufferSizeMB(256);
    cfg.setUseCompoundFile(false);
    FieldType type = contentsType();
    long adds = 0, replaces = 0, deletes = 0, docsIn = 0, commits = 0;
    int line = 0;
    double c0 = ImpactBench.cpu();
    long t0 = System.nanoTime();
    double mergeSeconds = 0;
    double mergeCpu = 0;
    try (IndexWriter w = new IndexWriter(FSDirectory.open(Paths.get(a[2])), cfg);
         BufferedReader r = Files.newBufferedReader(opsFile, StandardCharsets.UTF_8)) {
      int pending = 0;
      for (String text; (text = r.readLine()) != null; ) {
        line++;
        if (text.isEmpty()) continue;
        Op o = parseOp(text, opsFile + ":" + line);
        Term page = new Term("page", o.id);
        switch (o.op) {
          case "add": w.addDocuments(docs(o, type)); adds++; docsIn += o.units.size(); break;
          case "replace": w.updateDocuments(page, docs(o, type)); replaces++; docsIn += o.units.size(); break;
          default: w.deleteDocuments(page); deletes++;
        }
        if (++pending == every) {
          w.commit();
          commits++;
          pending = 0;
        }
      }
      if (pending > 0) {
        w.commit();
        commits++;
      }
      long t1 = System.nanoTime();
      double c1 = ImpactBench.cpu();
      if (merge) {
        w.forceMerge(1);
        w.commit();
        mergeSeconds = (System.nanoTime() - t1) / 1e9;
        mergeCpu = ImpactBench.cpu() - c1;
      }
      double seconds = (t1 - t0) / 1e9;
      double cpu = c1 - c0;
      long ops = adds + replaces + deletes;
      int maxDoc = w.getDocStats().maxDoc;
      int numDocs = w.getDocStats().numDocs;
      System.out.printf(Locale.ROOT,
          "{\"ops\":%d,\"adds\":%d,\"replaces\":%d,\"deletes\":%d,\"docsIn\":%d,\"commits\":%d,\"seconds\":%.3f,\"cpuSeconds\":%.3f,\"opsPerSecond\":%.1f,\"docsPerSecond\":%.1f,\"docsPerCpuSecond\":%.1f,\"maxDoc\":%d,\"liveDocs\":%d,\"forceMerge\":%b,\"mergeSeconds\":%.3f,\"mergeCpuSeconds\":%.3f}%n",
          ops, adds, replaces, deletes, docsIn, commits, seconds, cpu, ops / seconds, docsIn / seconds, docsIn / cpu, maxDoc, numDocs, merge, mergeSeconds, mergeCpu);
    }
  }

  static void merge(String[] a) throws Exception {
    IndexWriterConfig cfg = new IndexWriterConfig(null);
    cfg.setOpenMode(IndexWriterConfig.OpenMode.APPEND);
    cfg.setUseCompoundFile(false);
    int before;
    try (DirectoryReader r = DirectoryReader.open(FSDirectory.open(Paths.get(a[1])))) {
      before = r.leaves().size();
    }
    double c0 = ImpactBench.cpu();
    long t0 = System.nanoTime();
    try (IndexWriter w = new IndexWriter(FSDirectory.open(Paths.get(a[1])), cfg)) {
      w.forceMerge(1);
      w.commit();
    }
    System.out.printf(Locale.ROOT, "{\"segmentsBefore\":%d,\"seconds\":%.3f,\"cpuSeconds\":%.3f}%n", before, (System.nanoTime() - t0) / 1e9, ImpactBench.cpu() - c0);
  }

  static void search(String[] a) throws Exception {
    Analyzer analyzer = Bm25Bench.analyzer(a[1]);
    DirectoryReader reader = DirectoryReader.open(FSDirectory.open(Paths.get(a[2])));
    IndexSearcher searcher = new IndexSearcher(reader);
    searcher.setSimilarity(new BM25Similarity(Float.parseFloat(a[6]), Float.parseFloat(a[7])));
    searcher.setQueryCache(null);
    List<String> queries = Bm25Bench.readLines(a[3]);
    int k = Integer.parseInt(a[4]);
    try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(a[5]), StandardCharsets.UTF_8))) {
      for (String q : queries) {
        StringBuilder sb = new StringBuilder();
        for (ScoreDoc sd : searcher.search(Bm25Bench.query(analyzer, q), k).scoreDocs) {
          LeafReaderContext leaf = reader.leaves().get(ReaderUtil.subIndex(sd.doc, reader.leaves()));
          BinaryDocValues units = leaf.reader().getBinaryDocValues("unit");
          if (!units.advanceExact(sd.doc - leaf.docBase)) throw new IllegalStateException("doc " + sd.doc + " has no unit id");
          if (sb.length() > 0) sb.append(' ');
          sb.append(units.binaryValue().utf8ToString()).append(':').append(Float.toString(sd.score));
        }
        out.println(sb);
      }
    }
    System.out.printf(Locale.ROOT, "{\"queries\":%d,\"segments\":%d,\"maxDoc\":%d,\"liveDocs\":%d}%n", queries.size(), reader.leaves().size(), reader.maxDoc(), reader.numDocs());
    reader.close();
  }
}
