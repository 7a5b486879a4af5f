// Prints the terms Lucene 8.7 produces for each input line (stdin, UTF-8), tab-separated, one output
// line per input line: the ground truth tartan's analyzers are compared with.
// usage: java -cp <lucene jars>:<dir> Analyze english|lowercase|standard < lines > terms
import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.*;
import org.apache.lucene.analysis.core.WhitespaceTokenizer;
import org.apache.lucene.analysis.en.EnglishAnalyzer;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

public class Analyze {
  static Analyzer analyzer(String name) {
    switch (name) {
      case "english": return new EnglishAnalyzer();
      case "lowercase": return new Analyzer() {
        protected TokenStreamComponents createComponents(String f) {
          Tokenizer t = new WhitespaceTokenizer();
          return new TokenStreamComponents(t, new LowerCaseFilter(t));
        }
      };
      case "standard": return new Analyzer() {
        protected TokenStreamComponents createComponents(String f) {
          Tokenizer t = new StandardTokenizer();
          return new TokenStreamComponents(t, t);
        }
      };
      default: throw new IllegalArgumentException(name);
    }
  }

  public static void main(String[] args) throws IOException {
    Analyzer a = analyzer(args[0]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8)));
    String line;
    StringBuilder sb = new StringBuilder();
    while ((line = in.readLine()) != null) {
      sb.setLength(0);
      try (TokenStream ts = a.tokenStream("f", line)) {
        CharTermAttribute term = ts.addAttribute(CharTermAttribute.class);
        ts.reset();
        boolean first = true;
        while (ts.incrementToken()) {
          if (!first) sb.append('\t');
          sb.append(term);
          first = false;
        }
        ts.end();
      }
      out.println(sb);
    }
    out.flush();
  }
}
