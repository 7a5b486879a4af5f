// Derives the word-break class of every Unicode code point from Lucene 8.7's StandardTokenizer itself,
// by tokenizing a few probe strings around it (alone, between letters, between digits, after a Hebrew
// letter or katakana, doubled, …). Prints runs "start end class" (hex, inclusive); tartan's tokenizer
// table (src/retrieval/bm25/lucene-tables.ts) is generated from this output.
// usage: java -cp <lucene jars>:<dir> WordBreakTable > runs.txt
import java.io.*;
import java.util.*;
import org.apache.lucene.analysis.standard.StandardTokenizer;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;

public class WordBreakTable {
  static final StandardTokenizer tok = new StandardTokenizer();
  static final CharTermAttribute term = tok.addAttribute(CharTermAttribute.class);

  static List<String> tokens(String s) throws IOException {
    tok.setReader(new StringReader(s));
    tok.reset();
    List<String> out = new ArrayList<>();
    while (tok.incrementToken()) out.add(term.toString());
    tok.end();
    tok.close();
    return out;
  }

  static boolean is(List<String> t, String... want) {
    return t.equals(Arrays.asList(want));
  }

  static String classify(int cp) throws IOException {
    String c = new String(Character.toChars(cp));
    List<String> alone = tokens(c);
    if (is(alone, c)) {
      if (is(tokens(c + c), c + c)) {
        if (is(tokens("a" + c), "a" + c)) {
          if (is(tokens(c + "'"), c + "'")) return "Hebrew";
          if (is(tokens("a:" + c), "a:" + c)) return "Letter";
          if (is(tokens("1," + c), "1," + c)) return "Numeric";
          return "?joins-letters";
        }
        if (is(tokens("\u30ab" + c), "\u30ab" + c)) return "Katakana";
        if (is(tokens("a" + c), "a", c)) return "SouthEastAsian";
        return "?joins-self";
      }
      if (is(tokens(c + "\u200d" + c), c + "\u200d" + c)) {
        if (is(tokens("\ud83d\udc4d" + c), "\ud83d\udc4d" + c)) return "EmojiModifier";
        return "Emoji";
      }
      if (is(tokens(c + c), c, c)) return "Ideographic";
      return "?single";
    }
    if (!alone.isEmpty()) return "?odd";
    if (is(tokens(c + c), c + c)) return "RegionalIndicator";
    if (is(tokens("a" + c + "a"), "a" + c + "a")) {
      boolean ac = is(tokens("a" + c), "a" + c);
      boolean ca = is(tokens(c + "a"), c + "a");
      if (ac && ca) return "ExtendNumLet";
      if (ac) return "Extend";
      if (is(tokens("1" + c + "1"), "1" + c + "1")) return is(tokens("\u05d0" + c), "\u05d0" + c) ? "SingleQuote" : "MidNumLet";
      return "MidLetter";
    }
    if (is(tokens("1" + c + "1"), "1" + c + "1")) return "MidNum";
    if (is(tokens("\u05d0" + c + "\u05d0"), "\u05d0" + c + "\u05d0")) return "DoubleQuote";
    if (is(tokens(c + "\ufe0f"), c + "\ufe0f")) return "EmojiText";
    if (is(tokens(c + "\ufe0f\u20e3"), c + "\ufe0f\u20e3")) return "KeycapBase";
    return "Other";
  }

  public static void main(String[] args) throws IOException {
    PrintWriter out = new PrintWriter(new BufferedWriter(new OutputStreamWriter(System.out, "UTF-8")));
    String prev = null;
    int start = 0;
    for (int cp = 0; cp <= 0x110000; cp++) {
      String cls = cp == 0x110000 ? "END" : (cp >= 0xd800 && cp <= 0xdfff) ? "Other" : classify(cp);
      if (!cls.equals(prev)) {
        if (prev != null) out.printf("%x %x %s%n", start, cp - 1, prev);
        prev = cls;
        start = cp;
      }
    }
    out.flush();
  }
}
