package dev.relock.internal.script;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a script sends: its code without indentation or comment text, on the lines of the loaded script. */
class LuaScriptTest {

    @Test
    void indentationAndCommentLinesGoAndEveryLineKeepsItsNumber() {
        String script = "-- header\n  local x = 1 -- stays: a comment after code\n\tif x then\n    -- gone\n"
                + "    return x\n  end\n";

        assertThat(LuaScript.asSent(script))
                .isEqualTo("\nlocal x = 1 -- stays: a comment after code\nif x then\n\nreturn x\nend\n");
    }

    @Test
    void relocksScriptsHaveNoLongStringsOrCommentsWhereALineStartingWithDashesWouldNotBeAComment() throws Exception {
        List<LuaScript> scripts = new ArrayList<>();
        for (Class<?> holder : List.of(LuaScript.class, Class.forName("dev.relock.internal.redlock.RedlockEngine"))) {
            for (Field field : holder.getDeclaredFields()) {
                if (Modifier.isStatic(field.getModifiers()) && field.getType() == LuaScript.class) {
                    field.setAccessible(true);
                    scripts.add((LuaScript) field.get(null));
                }
            }
        }
        assertThat(scripts).hasSizeGreaterThan(20);
        for (LuaScript script : scripts) {
            assertThat(script.body()).as(script.name()).doesNotContain("[[", "]]", "[=")
                    .doesNotContainPattern("(?m)^[ \\t]*--").doesNotContainPattern("(?m)^[ \\t]+\\S");
        }
    }
}
