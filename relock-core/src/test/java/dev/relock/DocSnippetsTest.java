package dev.relock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.relock.DocSnippets.Block;
import dev.relock.DocSnippets.Region;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Every Java code block of the README and docs/ is compiled by the build: each has a marked region in a test
 * source of the module whose class path it needs (see {@link DocSnippets} for the markers), and that region is
 * the block line for line. A block added to a document without a source, a block edited without its source, and
 * a source whose block is gone fail here. The sources are compiled by their modules' test compilation; this test
 * only holds the texts together, so it needs no server.
 */
class DocSnippetsTest {

    /** Languages whose every block must have a source; other blocks (shell, YAML, XML, SQL) are not compiled. */
    private static final Set<String> COMPILED = Set.of("java", "kotlin");

    @Test
    void everyJavaBlockOfTheDocsHasASourceThatTheBuildCompiles() {
        Set<String> sourced = DocSnippets.regions().stream()
                .flatMap(region -> region.ids().stream().map(id -> region.language() + " " + id))
                .collect(Collectors.toSet());
        List<String> unsourced = DocSnippets.blocks().stream()
                .filter(block -> COMPILED.contains(block.language()))
                .filter(block -> !sourced.contains(block.language() + " " + block.id()))
                .map(Block::where).toList();
        assertThat(unsourced)
                .as("blocks with no source: copy each into a test source of the module that has its class path, "
                        + "between '%s <id>' and '%s'", DocSnippets.BEGIN, DocSnippets.END)
                .isEmpty();
    }

    @Test
    void everyMarkedRegionIsTheBlockItNames() {
        List<Block> blocks = DocSnippets.blocks();
        List<Region> regions = DocSnippets.regions();
        assertThat(regions).as("marked regions in the test sources").isNotEmpty();
        List<String> problems = new ArrayList<>();
        for (Region region : regions) {
            for (String id : region.ids()) {
                Block block = blocks.stream()
                        .filter(candidate -> candidate.id().equals(id) && candidate.language().equals(region.language()))
                        .findFirst().orElse(null);
                if (block == null) {
                    problems.add(region.where() + " names " + id + ", which has no " + region.language() + " block");
                } else if (!block.lines().equals(region.lines())) {
                    problems.add(region.where() + " differs from " + block.where() + firstDifference(block, region));
                }
            }
        }
        assertThat(problems).as("regions that are not their blocks").isEmpty();
    }

    @Test
    void theChineseReadmesFirstExampleIsTheReadmes() {
        Block readme = DocSnippets.block("README.md#usage", "java");
        Block chinese = DocSnippets.blocks().stream()
                .filter(block -> block.id().startsWith("README.zh-CN.md#") && block.language().equals("java"))
                .findFirst().orElseThrow(() -> new AssertionError("README.zh-CN.md has no java block"));
        assertThat(String.join("\n", chinese.lines()))
                .as("%s, the README's first example as README.zh-CN.md shows it: change both together", chinese.where())
                .isEqualTo(String.join("\n", readme.lines()));
    }

    @Test
    void anchorsAreGitHubs() {
        assertThat(DocSnippets.anchor("Extending a lease, holding at least this long"))
                .isEqualTo("extending-a-lease-holding-at-least-this-long");
        assertThat(DocSnippets.anchor("Read-write locks, semaphores, multi-locks"))
                .isEqualTo("read-write-locks-semaphores-multi-locks");
        assertThat(DocSnippets.anchor("`RedisLockRegistry` → relock")).isEqualTo("redislockregistry--relock");
        assertThat(DocSnippets.anchor("用法")).isEqualTo("用法");
    }

    private static String firstDifference(Block block, Region region) {
        int line = 0;
        while (line < block.lines().size() && line < region.lines().size()
                && block.lines().get(line).equals(region.lines().get(line))) {
            line++;
        }
        String doc = line < block.lines().size() ? block.lines().get(line) : "(the block ends)";
        String source = line < region.lines().size() ? region.lines().get(line) : "(the region ends)";
        return " at its line " + (line + 1) + ":\n  doc:    " + doc + "\n  source: " + source;
    }
}
