package dev.relock;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The code blocks of the repository's Markdown (README*.md and docs/*.md) and the regions of test sources that
 * stand for them, so that {@link DocSnippetsTest} can hold each block to a source that the build compiles.
 *
 * <p>A block's id is its document's path from the repository root, {@code #}, and the GitHub anchor of the
 * nearest heading above it ({@code docs/usage.md#the-lock}); the second block of the same language under one
 * heading gets {@code ~2}, the third {@code ~3}. A region in a test source (any module, {@code .java} for
 * {@code java} blocks, {@code .kt} for {@code kotlin}) lies between a line {@value #BEGIN} followed by the ids
 * it stands for, and a line {@value #END}. Its text is the block's line for line, after both lose their common
 * indentation and trailing blanks, except that lines with the comment {@value #NOT_IN_THE_DOCS} are left out:
 * what the source needs and the reader does not (a test's server instead of the doc's host, a probe).
 */
final class DocSnippets {

    static final String BEGIN = "// snippet";
    static final String END = "// snippet end";
    static final String NOT_IN_THE_DOCS = "// not in the docs";

    /** Test sources end up in these languages' files; a block in another language has no region. */
    private static final Map<String, String> LANGUAGE_BY_EXTENSION = Map.of(".java", "java", ".kt", "kotlin");

    /** Folders a walk of the repository never enters: build output, VCS data, installed tools. */
    private static final Set<String> SKIPPED_FOLDERS = Set.of("target", ".git", "node_modules", ".mvn");

    /** One fenced code block of a document; {@code line} is the 1-based line of its opening fence. */
    record Block(String id, String language, List<String> lines, int line) {
        String where() {
            return id + " (" + language + ", line " + line + ")";
        }
    }

    /** One marked region of a test source, standing for the blocks {@code ids} (all of {@code language}). */
    record Region(Path file, int line, String language, List<String> ids, List<String> lines) {
        String where() {
            return root().relativize(file) + ":" + line;
        }
    }

    private DocSnippets() {
    }

    /** The repository's root: the parent of the module whose tests run (Maven runs them in the module). */
    static Path root() {
        return Path.of("").toAbsolutePath().getParent();
    }

    /** README.md, README.*.md (its translations) and docs/*.md. */
    static List<Path> documents() {
        try (Stream<Path> top = Files.list(root()); Stream<Path> docs = Files.list(root().resolve("docs"))) {
            Stream<Path> readmes = top.filter(path -> path.getFileName().toString().matches("README(\\..+)?\\.md"));
            return Stream.concat(readmes, docs.filter(path -> path.toString().endsWith(".md"))).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Every fenced code block of every document. */
    static List<Block> blocks() {
        return documents().stream().flatMap(doc -> blocks(doc).stream()).toList();
    }

    /** The block of {@code language} with this id. */
    static Block block(String id, String language) {
        return blocks().stream().filter(block -> block.id().equals(id) && block.language().equals(language))
                .findFirst().orElseThrow(() -> new AssertionError("no " + language + " block " + id));
    }

    /** The fenced code blocks of one document, in order. A fence is a line of ``` (indented or not). */
    static List<Block> blocks(Path doc) {
        List<String> lines = read(doc);
        String path = root().relativize(doc).toString().replace('\\', '/');
        List<Block> blocks = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        String anchor = "";
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.matches("#{1,6}\\s.*")) {
                anchor = anchor(line.replaceFirst("^#+\\s*", ""));
            } else if (line.startsWith("```")) {
                // the info string's first word, as GitHub reads it: ```Java and ```java title="x" are java
                String info = line.substring(3).strip();
                String language = info.isEmpty() ? "" : info.split("\\s+")[0].toLowerCase(Locale.ROOT);
                int close = i + 1;
                while (close < lines.size() && !lines.get(close).strip().equals("```")) {
                    close++;
                }
                if (close == lines.size()) {
                    throw new AssertionError(path + ":" + (i + 1) + ": the code block is not closed");
                }
                int nth = seen.merge(anchor + " " + language, 1, Integer::sum);
                String id = path + "#" + anchor + (nth > 1 ? "~" + nth : "");
                blocks.add(new Block(id, language, unindented(lines.subList(i + 1, close)), i + 1));
                i = close;
            }
        }
        return blocks;
    }

    /** Every marked region in the test sources of every module. */
    static List<Region> regions() {
        List<Path> sources = new ArrayList<>();
        try {
            Files.walkFileTree(root(), new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
                    return SKIPPED_FOLDERS.contains(dir.getFileName().toString()) ? FileVisitResult.SKIP_SUBTREE
                            : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
                    if (language(file) != null && root().relativize(file).toString().replace('\\', '/').contains("/src/test/")) {
                        sources.add(file);
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sources.stream().sorted().flatMap(file -> regions(file).stream()).toList();
    }

    /** The marked regions of one source file. */
    static List<Region> regions(Path file) {
        List<String> lines = read(file);
        String language = language(file);
        List<Region> regions = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (!line.startsWith(BEGIN + " ") || line.equals(END)) {
                continue;
            }
            List<String> ids = List.of(line.substring(BEGIN.length()).strip().split("\\s+"));
            int end = i + 1;
            while (end < lines.size() && !lines.get(end).strip().equals(END)) {
                if (lines.get(end).strip().startsWith(BEGIN + " ") && !lines.get(end).strip().equals(END)) {
                    throw new AssertionError(file + ":" + (end + 1) + ": a region begins inside the region of line " + (i + 1));
                }
                end++;
            }
            if (end == lines.size()) {
                throw new AssertionError(file + ":" + (i + 1) + ": no '" + END + "' after this region's start");
            }
            List<String> text = lines.subList(i + 1, end).stream()
                    .filter(source -> !source.contains(NOT_IN_THE_DOCS)).toList();
            regions.add(new Region(file, i + 1, language, ids, unindented(text)));
            i = end;
        }
        return regions;
    }

    /** The lines without their common indentation, blank lines empty, trailing blanks cut. */
    static List<String> unindented(List<String> lines) {
        int indent = lines.stream().filter(line -> !line.isBlank())
                .mapToInt(line -> line.length() - line.stripLeading().length()).min().orElse(0);
        return lines.stream().map(line -> line.isBlank() ? "" : line.substring(indent).stripTrailing()).toList();
    }

    /**
     * A heading's anchor as GitHub makes it: lower case, punctuation and Markdown marks dropped (letters of any
     * script, digits, '-' and '_' kept), each space a hyphen.
     */
    static String anchor(String heading) {
        StringBuilder anchor = new StringBuilder();
        heading.strip().toLowerCase(Locale.ROOT).codePoints().forEach(c -> {
            if (c == ' ') {
                anchor.append('-');
            } else if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                anchor.appendCodePoint(c);
            }
        });
        return anchor.toString();
    }

    private static String language(Path file) {
        String name = file.getFileName().toString();
        int dot = name.lastIndexOf('.');
        return dot < 0 ? null : LANGUAGE_BY_EXTENSION.get(name.substring(dot));
    }

    private static List<String> read(Path file) {
        try {
            return Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
