// Prints every code point that Java's Character.toLowerCase changes, as "cp lower" (hex): what
// Lucene's LowerCaseFilter does, for src/retrieval/bm25/lucene-tables.ts.
// usage: java JavaLowerCase > lower.txt
public class JavaLowerCase {
  public static void main(String[] args) {
    StringBuilder sb = new StringBuilder();
    for (int cp = 0; cp <= 0x10ffff; cp++) {
      int lower = Character.toLowerCase(cp);
      if (lower != cp) sb.append(Integer.toHexString(cp)).append(' ').append(Integer.toHexString(lower)).append('\n');
    }
    System.out.print(sb);
  }
}
