package images_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/session/attachments"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/images"
)

func ExampleNormalize() {
	// A 3000x1000 two-colour PNG, over the default 2048 px budget.
	img := image.NewNRGBA(image.Rect(0, 0, 3000, 1000))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+3] = 200, 255
	}
	img.SetNRGBA(0, 0, color.NRGBA{B: 255, A: 255})
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)

	n, err := images.Normalize(context.Background(), "banner.png", buf.Bytes(), images.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %dx%d, from %dx%d; multiply coordinates by %.3f\n",
		n.MediaType, n.Width, n.Height, n.SourceWidth, n.SourceHeight, n.Scale())

	// The content decides the format, not the name.
	_, err = images.Normalize(context.Background(), "banner.jpg", buf.Bytes(), images.Limits{})
	fmt.Println(err)
	// Output:
	// image/png 2048x683, from 3000x1000; multiply coordinates by 1.465
	// banner.jpg is named as a JPEG image, but its content is PNG. Rename it to banner.png (or copy it under that name) and call read_image on the new name.
}

func ExampleReadImage() {
	// A workspace with one photo, in memory.
	fsys := fstest.NewMemFS("/project")
	photo, _ := os.ReadFile("testdata/lossy.webp")
	_ = fsys.SetFile("/project/photo.webp", photo, 0o644)

	// What the agent loop gives a tool: here, a model that accepts
	// images, and an attachment store.
	state := &tools.State{}
	defer state.Close()
	env := &tools.Env{
		Cwd:         "/project",
		FS:          fsys,
		ModelInput:  []harness.Modality{harness.ModalityText, harness.ModalityImage},
		State:       state,
		Attachments: attachments.NewMemory(),
	}
	res, err := images.ReadImage(images.Config{}).Execute(context.Background(), &tools.Call{
		Name: "read_image", Arguments: `{"file_path":"photo.webp"}`, Env: env,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].Text)
	fmt.Println(res.Content[1].Image.MediaType, res.Content[1].Image.Digest[:19])

	// A text-only model is refused before any I/O.
	env.ModelInput = []harness.Modality{harness.ModalityText}
	_, err = images.ReadImage(images.Config{}).Execute(context.Background(), &tools.Call{
		Name: "read_image", Arguments: `{"file_path":"photo.webp"}`, Env: env,
	})
	fmt.Println(harness.CodeOf(err))
	// Output:
	// /project/photo.webp: image/webp, 40x30 px, 180 bytes.
	// image/webp sha256:23e5c9c08ee7
	// image_input_unsupported
}
