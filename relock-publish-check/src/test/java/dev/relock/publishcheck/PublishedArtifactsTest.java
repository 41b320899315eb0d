package dev.relock.publishcheck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * What every published artifact must carry to go to Maven Central and onto a module path, checked on
 * the jars this build packaged (the reactor's, or the local repository's when run alone).
 *
 * <p>"Published" is stated once, in the module POMs: a module of the root pom is published unless it
 * sets {@code relock.publish.skip} to true. Each published jar module must be a dependency of this
 * module (so its jar is here), and be managed by relock-bom; this class fails when either is forgotten.
 * The POMs are read as written: a module without its own licence inherits the root pom's.
 */
class PublishedArtifactsTest {

    private static final Path ROOT = Path.of(required("relock.root")).normalize();
    private static final String VERSION = required("relock.version");

    private static final Pom ROOT_POM = Pom.read(ROOT.resolve("pom.xml"));
    private static final Map<String, Pom> PUBLISHED = publishedModules();

    @Test
    void relockPublishSkipIsTheOneSwitch() {
        for (String skip : List.of("maven.deploy.skip", "maven.source.skip", "maven.javadoc.skip")) {
            assertThat(ROOT_POM.text("properties", skip)).as("the root pom's " + skip).isEqualTo("${relock.publish.skip}");
            for (Element module : ROOT_POM.elements("modules", "module")) {
                assertThat(modulePom(module).text("properties", skip))
                        .as(module.getTextContent().strip() + " sets " + skip + " (set relock.publish.skip instead)")
                        .isNull();
            }
        }
    }

    @Test
    void everyPublishedJarModuleIsCheckedHere() {
        assertThat(jarsByArtifactId().keySet())
                .as("the published jar modules this module depends on (add a new one to its pom)")
                .containsExactlyInAnyOrderElementsOf(publishedJarModules());
    }

    @Test
    void theBomManagesEveryPublishedJarModuleAtTheProjectVersion() {
        Pom bom = PUBLISHED.get("relock-bom");
        assertThat(bom).as("relock-bom among the published modules").isNotNull();
        assertThat(bom.text("version")).as("relock-bom's version").isEqualTo(VERSION);
        List<String> managed = new ArrayList<>();
        for (Element element : bom.elements("dependencyManagement", "dependencies", "dependency")) {
            Pom dependency = new Pom(element);
            assertThat(dependency.text("groupId")).isEqualTo("dev.relock");
            assertThat(dependency.text("version")).isEqualTo("${project.version}");
            managed.add(dependency.text("artifactId"));
        }
        assertThat(managed).containsExactlyInAnyOrderElementsOf(publishedJarModules());
        for (Element element : bom.elements("build", "pluginManagement", "plugins", "plugin")) {
            Pom plugin = new Pom(element);
            String property = plugin.text("artifactId").replace("maven-", "") + ".version";
            assertThat(plugin.text("version")).as("relock-bom's " + plugin.text("artifactId") + ", as the root pom's")
                    .isEqualTo(ROOT_POM.text("properties", property));
        }
    }

    @Test
    void everyPublishedPomHasTheLicenceUrlScmAndDevelopers() {
        assertThat(ROOT_POM.text("properties", "relock.publish.skip"))
                .as("relock-parent is published: every published POM names it as parent")
                .isEqualTo("false");
        assertThat(ROOT_POM.text("licenses", "license", "name")).isEqualTo("Apache-2.0");
        assertThat(ROOT_POM.text("url")).isEqualTo("https://github.com/relock-dev/relock");
        assertThat(ROOT_POM.text("scm", "url")).isEqualTo("https://github.com/relock-dev/relock");
        assertThat(ROOT_POM.text("developers", "developer", "name")).isNotBlank();
        for (Map.Entry<String, Pom> module : PUBLISHED.entrySet()) {
            Pom pom = module.getValue();
            if (pom.element("parent") != null) {
                assertThat(pom.text("parent", "artifactId")).as(module.getKey() + "'s parent").isEqualTo("relock-parent");
                for (String inherited : List.of("licenses", "url", "scm", "developers")) {
                    assertThat(pom.element(inherited))
                            .as(module.getKey() + " declares " + inherited + " instead of inheriting it").isNull();
                }
            } else {
                for (String repeated : List.of("licenses", "url", "scm", "developers")) {
                    assertThat(pom.text(repeated)).as(module.getKey() + " repeats the root pom's " + repeated)
                            .isEqualTo(ROOT_POM.text(repeated));
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("publishedJars")
    void theJarNamesItsModuleInTheManifest(String artifactId, Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            assertThat(file.getManifest().getMainAttributes().getValue("Automatic-Module-Name"))
                    .as("Automatic-Module-Name of " + jar)
                    .isEqualTo(PUBLISHED.get(artifactId).text("properties", "relock.module.name"))
                    .matches("dev\\.relock(\\.[a-z][a-z0-9]*)*");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("publishedJars")
    void theJarCarriesTheLicence(String artifactId, Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            var licence = file.getJarEntry("META-INF/LICENSE");
            assertThat(licence).as("META-INF/LICENSE in " + jar).isNotNull();
            try (InputStream in = file.getInputStream(licence)) {
                assertThat(in.readAllBytes()).isEqualTo(Files.readAllBytes(ROOT.resolve("LICENSE")));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("publishedJars")
    void sourcesAndJavadocJarsLieBesideTheJar(String artifactId, Path jar) throws IOException {
        assertThat(entries(beside(jar, "sources"))).as("Java or Kotlin sources")
                .anyMatch(name -> name.endsWith(".java") || name.endsWith(".kt"));
        assertThat(entries(beside(jar, "javadoc"))).contains("index.html");
    }

    static Stream<Object[]> publishedJars() {
        return jarsByArtifactId().entrySet().stream().map(jar -> new Object[] {jar.getKey(), jar.getValue()});
    }

    /** The modules of the root pom that do not set relock.publish.skip, by artifactId. */
    private static Map<String, Pom> publishedModules() {
        Map<String, Pom> published = new TreeMap<>();
        for (Element module : ROOT_POM.elements("modules", "module")) {
            Pom pom = modulePom(module);
            if (!"true".equals(pom.text("properties", "relock.publish.skip"))) {
                published.put(pom.text("artifactId"), pom);
            }
        }
        return published;
    }

    private static Pom modulePom(Element module) {
        return Pom.read(ROOT.resolve(module.getTextContent().strip()).resolve("pom.xml"));
    }

    private static List<String> publishedJarModules() {
        return PUBLISHED.entrySet().stream()
                .filter(module -> !"pom".equals(module.getValue().text("packaging")))
                .map(Map.Entry::getKey)
                .toList();
    }

    /** The dev.relock jars this module depends on, by the artifactId their pom.properties records. */
    private static Map<String, Path> jarsByArtifactId() {
        Map<String, Path> jars = new TreeMap<>();
        for (String path : required("relock.published.jars").split(File.pathSeparator)) {
            Path jar = Path.of(path);
            assertThat(jar).as("a packaged jar").isRegularFile();
            Path other = jars.put(artifactIdOf(jar), jar);
            assertThat(other).as("another jar of the module of " + jar).isNull();
        }
        return jars;
    }

    private static String artifactIdOf(Path jar) {
        try (JarFile file = new JarFile(jar.toFile())) {
            String descriptor = file.stream()
                    .map(entry -> entry.getName())
                    .filter(name -> name.startsWith("META-INF/maven/dev.relock/") && name.endsWith("/pom.properties"))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no META-INF/maven/dev.relock/*/pom.properties in " + jar));
            Properties properties = new Properties();
            try (InputStream in = file.getInputStream(file.getEntry(descriptor))) {
                properties.load(in);
            }
            assertThat(properties.getProperty("version")).as("the version of " + jar).isEqualTo(VERSION);
            return properties.getProperty("artifactId");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** relock-core-1.0.jar's sources jar is relock-core-1.0-sources.jar, in target/ and in a repository alike. */
    private static Path beside(Path jar, String classifier) {
        String name = jar.getFileName().toString();
        Path other = jar.resolveSibling(name.substring(0, name.length() - ".jar".length()) + "-" + classifier + ".jar");
        assertThat(other).as("the " + classifier + " jar beside " + jar).isRegularFile();
        return other;
    }

    private static List<String> entries(Path jar) throws IOException {
        try (JarFile file = new JarFile(jar.toFile())) {
            return file.stream().map(entry -> entry.getName()).toList();
        }
    }

    /** Set by this module's pom (surefire's systemPropertyVariables). */
    private static String required(String property) {
        String value = System.getProperty(property);
        if (value == null) {
            throw new IllegalStateException(property + " is not set: run this test with Maven, "
                    + "mvn verify -pl relock-publish-check -am");
        }
        return value;
    }

    /**
     * A POM as written (no inheritance, no interpolation), or an element of one, read by element paths;
     * texts with their white space collapsed.
     */
    private record Pom(Element top) {

        static Pom read(Path file) {
            try {
                Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
                return new Pom(document.getDocumentElement());
            } catch (Exception e) {
                throw new IllegalStateException("cannot read " + file, e);
            }
        }

        Element element(String... path) {
            List<Element> found = elements(path);
            return found.isEmpty() ? null : found.get(0);
        }

        String text(String... path) {
            Element element = element(path);
            return element == null ? null : element.getTextContent().strip().replaceAll("\\s+", " ");
        }

        /** The elements at path; at each step, every child of that name. */
        List<Element> elements(String... path) {
            List<Element> current = List.of(top);
            for (String name : path) {
                List<Element> next = new ArrayList<>();
                for (Element element : current) {
                    for (Node node = element.getFirstChild(); node != null; node = node.getNextSibling()) {
                        if (node instanceof Element child && child.getTagName().equals(name)) {
                            next.add(child);
                        }
                    }
                }
                current = next;
            }
            return current;
        }
    }
}
