"""mmengine's BaseDataset loads its annotation file in load_data_list (called from full_init at construction): the
default implementation reads ann_file with mmengine.fileio.load and accepts only a dict holding both 'metainfo' and
'data_list' (the OpenMMLab 2.0 annotation format); otherwise it raises ValueError "Annotation must have data_list and
metainfo keys" from mmengine/dataset/base_dataset.py. trigger(): a COCO-style JSON (images, annotations, categories)
written to a temporary folder is given to BaseDataset(ann_file=...). Solution 1 converts the same content to the 2.0
format (metainfo with the class names, one data_list entry per image with its instances) and BaseDataset loads it: one
sample, the class names in metainfo, the box carried over. Solution 2 keeps the COCO file and overrides load_data_list in
a subclass that parses it. The validationCode guard (it checks the file only for a dataset class whose loading reaches
the default load_data_list, following overrides that call super().load_data_list()) runs from the record's text on the trigger's file with BaseDataset (flagged), a file with
data_list but no metainfo (flagged; BaseDataset refuses it with the same error) and the converted file (passes); VALID
holds 2.0 files that BaseDataset loads (JSON with classes, JSON with an empty metainfo, pickle, YAML, and a relative
ann_file under data_root as OpenMMLab configs write it) and the COCO file with a subclass that overrides load_data_list,
which loads it, a subclass whose load_data_list calls super() and thins the list (as mmdet3d's WaymoDataset does for load_interval,
open-mmlab/mmdetection3d mmdet3d/datasets/waymo_dataset.py at 02abf71839f3654914e388b9fc533dbfc2e309a7) on a
2.0 file, and a subclass of the COCO-parsing class that extends its loader through super() on the COCO file. The guard
stage also flags the COCO file given as a relative ann_file under data_root, and the COCO file with the super()-calling
subclass of BaseDataset, which is shown to raise the error itself. The excerpt is
mmengine/dataset/base_dataset.py at tag v0.10.7 (390ba2fbb272816adfd2883642326d0fd0ca6049) of the open-mmlab/mmengine
snapshot, byte-identical to the installed 0.10.7 file; the raise is line 438 at v0.7.4 and v0.8.5. Results: errkb
reproduce mmengine-dataset-metainfo-keys --with mmengine==0.7.4 --with mmengine==0.8.5 --with mmengine==0.10.7 (the
installed venv has no mmengine and skips).
"""
NEEDS = {"packages": {"torch": "==2.13.0+cpu", "mmengine": ">=0.7.4,<0.11"}, "cuda_devices": 0, "timeout_s": 120}
SOLUTIONS = {1: "convert_to_openmmlab_format", 2: "override_load_data_list"}
CODE = {"validationCode": "guard"}
CODE_NAMES = {"validationCode": ["dataset_cls", "ann_file", "data_root"]}
VALID = {"json-with-classes": "valid_json_with_classes", "empty-metainfo": "valid_empty_metainfo",
         "pickle-and-yaml": "valid_pickle_and_yaml", "own-loader": "valid_own_loader",
         "relative-to-data-root": "valid_relative_to_data_root", "extends-loaders": "valid_extends_loaders"}
WORDINGS = [
    {"text": "Annotation must have data_list and metainfo keys", "source": "mmengine==0.10.7", "match": "pattern"},
    {"text": "Annotation must have data_list and metainfo keys", "source": "mmengine==0.7.4", "match": "pattern"},
    {"text": "Annotation must have data_list and metainfo keys", "source": "mmengine==0.8.5", "match": "pattern"},
    {"text": "ValueError: class `EpochBasedTrainLoop` in mmengine/runner/loops.py: class `OCRDataset` in "
             "mmocr/datasets/ocr_dataset.py: Annotation must have data_list and metainfo keys",
     "source": "open-mmlab/mmocr#1908", "match": "matcher"},
    {"text": "ValueError: Annotation must have data_list and metainfo keys", "source": "open-mmlab/mmpose#3046",
     "match": "matcher"},
]
PROVENANCE = {"checked": "upstream-copy", "repo": "open-mmlab/mmengine",
              "commit": "390ba2fbb272816adfd2883642326d0fd0ca6049", "path": "mmengine/dataset/base_dataset.py",
              "line": 440, "offset": 0}

import errkb_record as record

COCO = {"images": [{"id": 1, "file_name": "a.jpg", "width": 32, "height": 24}],
        "annotations": [{"id": 7, "image_id": 1, "category_id": 3, "bbox": [1, 2, 8, 6]}],
        "categories": [{"id": 3, "name": "cat"}]}


def _write(name, content, kind="json"):
    import json
    import os
    import pickle
    import tempfile

    path = os.path.join(tempfile.mkdtemp(), name)
    if kind == "json":
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(content, handle)
    elif kind == "pkl":
        with open(path, "wb") as handle:
            pickle.dump(content, handle)
    else:
        import yaml

        with open(path, "w", encoding="utf-8") as handle:
            yaml.safe_dump(content, handle)
    return path


def _converted(coco):
    """The COCO content in the OpenMMLab 2.0 layout."""
    names = {c["id"]: c["name"] for c in coco["categories"]}
    label = {cid: i for i, cid in enumerate(sorted(names))}
    data_list = []
    for image in coco["images"]:
        instances = []
        for ann in coco["annotations"]:
            if ann["image_id"] == image["id"]:
                x, y, w, h = ann["bbox"]
                instances.append({"bbox": [x, y, x + w, y + h], "bbox_label": label[ann["category_id"]]})
        data_list.append({"img_path": image["file_name"], "height": image["height"], "width": image["width"],
                          "instances": instances})
    return {"metainfo": {"classes": [names[cid] for cid in sorted(names)]}, "data_list": data_list}


def trigger():
    from mmengine.dataset import BaseDataset

    BaseDataset(ann_file=_write("train.json", COCO))


def convert_to_openmmlab_format():
    """Solution 1: the same annotations in the 2.0 format load."""
    from mmengine.dataset import BaseDataset

    dataset = BaseDataset(ann_file=_write("train_2.0.json", _converted(COCO)))
    assert len(dataset) == 1
    assert list(dataset.metainfo["classes"]) == ["cat"]
    sample = dataset.get_data_info(0)
    assert sample["img_path"] == "a.jpg" and sample["instances"][0]["bbox"] == [1, 2, 9, 8]
    assert sample["instances"][0]["bbox_label"] == 0


def _coco_style_class():
    from mmengine.dataset import BaseDataset
    from mmengine.fileio import load

    class CocoStyleDataset(BaseDataset):
        METAINFO = {"classes": ("cat",)}

        def load_data_list(self):
            return _converted(load(self.ann_file))["data_list"]

    return CocoStyleDataset


def override_load_data_list():
    """Solution 2: a subclass parses the COCO file itself."""
    dataset = _coco_style_class()(ann_file=_write("train.json", COCO))
    assert len(dataset) == 1 and tuple(dataset.metainfo["classes"]) == ("cat",)
    assert dataset.get_data_info(0)["instances"][0]["bbox"] == [1, 2, 9, 8]


def guard():
    import os

    from mmengine.dataset import BaseDataset

    coco_file = _write("train.json", COCO)
    assert not record.check("validationCode", {"dataset_cls": BaseDataset, "ann_file": coco_file, "data_root": None})
    folder, name = os.path.split(coco_file)
    assert not record.check("validationCode", {"dataset_cls": BaseDataset, "ann_file": name, "data_root": folder})
    thinned = _thinned(BaseDataset)
    try:
        thinned(ann_file=coco_file)
    except ValueError as error:
        assert "Annotation must have data_list and metainfo keys" in str(error)
    else:
        raise AssertionError("a subclass calling the default loader accepted the COCO file")
    assert not record.check("validationCode", {"dataset_cls": thinned, "ann_file": coco_file, "data_root": None})
    only_data_list = _write("no_meta.json", {"data_list": _converted(COCO)["data_list"]})
    try:
        BaseDataset(ann_file=only_data_list)
    except ValueError as error:
        assert "Annotation must have data_list and metainfo keys" in str(error)
    else:
        raise AssertionError("BaseDataset accepted a file without metainfo")
    assert not record.check("validationCode", {"dataset_cls": BaseDataset, "ann_file": only_data_list,
                                               "data_root": None})
    assert record.check("validationCode", {"dataset_cls": BaseDataset,
                                           "ann_file": _write("train_2.0.json", _converted(COCO)), "data_root": None})


def _proven(path, dataset_cls=None):
    from mmengine.dataset import BaseDataset

    dataset_cls = dataset_cls or BaseDataset
    assert len(dataset_cls(ann_file=path)) >= 1
    return {"dataset_cls": dataset_cls, "ann_file": path, "data_root": None}


def valid_json_with_classes():
    two = dict(COCO, images=COCO["images"] + [{"id": 2, "file_name": "b.jpg", "width": 10, "height": 10}])
    return _proven(_write("two.json", _converted(two)))


def valid_empty_metainfo():
    return _proven(_write("empty_meta.json", {"metainfo": {}, "data_list": [{"img_path": "a.jpg"}]}))


def valid_pickle_and_yaml():
    content = _converted(COCO)
    return [_proven(_write("train.pkl", content, "pkl")), _proven(_write("train.yaml", content, "yaml"))]


def valid_own_loader():
    return _proven(_write("train.json", COCO), _coco_style_class())


def valid_relative_to_data_root():
    """A config's usual form: data_root plus an ann_file relative to it, which BaseDataset joins."""
    import os

    from mmengine.dataset import BaseDataset

    folder, name = os.path.split(_write("train_2.0.json", _converted(COCO)))
    assert not os.path.exists(name)
    assert len(BaseDataset(data_root=folder, ann_file=name)) == 1
    return [{"dataset_cls": BaseDataset, "ann_file": name, "data_root": folder},
            {"dataset_cls": BaseDataset, "ann_file": name, "data_root": folder + "/"}]


def _thinned(parent):
    """A subclass that extends its parent's loader through super(), as mmdet3d's WaymoDataset adds load_interval."""

    class Thinned(parent):
        def load_data_list(self):
            return super().load_data_list()[::1]

    return Thinned


def valid_extends_loaders():
    from mmengine.dataset import BaseDataset

    return [_proven(_write("train_2.0.json", _converted(COCO)), _thinned(BaseDataset)),
            _proven(_write("train.json", COCO), _thinned(_coco_style_class()))]
